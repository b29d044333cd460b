#!/usr/bin/env python3
"""Reads the vLLM bars and the vLLM TPOT at QPS 2 off the v0.6.0 performance update's H100 charts (README.md,
"The v0.6.0 performance update"). Needs Pillow and NumPy (Debian: python3-pil python3-numpy).

    git clone https://github.com/vllm-project/vllm-project.github.io blog   # assets/figures/perf-v060/
    python3 bench/fidelity/chart-values.py blog/assets/figures/perf-v060

Each chart is a 3 x 3 grid of panels (rows: ShareGPT, decode-heavy, prefill-heavy; columns: TTFT, TPOT, throughput).
A panel's frame is found as the long black rules of the image, its y axis from the tick marks left of the frame and
the tick labels given below (read off the chart). A bar's value is its top edge; a TPOT line's value at QPS 2 is the
line's centre fitted through the edges of the vLLM (blue) line that the other engines' lines leave visible between
QPS 2 and QPS 4 (the line is 16 px thick; its error-bar caps at QPS 2 are hidden under the others).
"""
import sys
from pathlib import Path

import numpy as np
from PIL import Image

BLUE = (0, 107, 164)
LINE_HALF_WIDTH = 7.5
# chart -> {(row, column): y tick labels, top to bottom}
TICKS = {
    "H100_8B.png": {(1, 1): [80, 60, 40, 20, 0], (1, 2): [30, 20, 10, 0],
                    (2, 1): [200, 150, 100, 50, 0], (2, 2): [60, 40, 20, 0]},
    "H100_70B.png": {(1, 1): [100, 75, 50, 25, 0], (1, 2): [15, 10, 5, 0],
                     (2, 1): [600, 400, 200, 0], (2, 2): [20, 10, 0]},
}
ROWS = ["ShareGPT", "decode-heavy", "prefill-heavy"]


def runs(values):
    groups = []
    for v in values:
        if groups and v - groups[-1][-1] <= 1:
            groups[-1].append(v)
        else:
            groups.append([v])
    return groups


def frames(black):
    """Panels as (top, bottom, left, right): the long horizontal black rules, paired top and bottom per column."""
    height, width = black.shape
    rules = {}
    for y in range(height):
        for r in runs(list(np.where(black[y])[0])):
            if len(r) > 700:
                rules.setdefault((r[-1] // 50), []).append((y, r[0], r[-1]))
    panels = []
    for rs in rules.values():
        ys = [g[0] for g in runs([y for y, _, _ in rs])]
        for top, bottom in zip(ys[0::2], ys[1::2]):
            left = max(x0 for y, x0, _ in rs if y in (top, top + 1))
            panels.append((top + 1, bottom, left, rs[0][2]))
    return sorted(panels, key=lambda p: (p[0] // 100, p[2]))


def axis(black, panel, labels):
    top, bottom, left, _ = panel
    ticks = [sum(g) / len(g) for g in runs([y for y in range(top - 5, bottom + 6) if black[y, left - 8:left - 2].all()])]
    assert len(ticks) == len(labels), (panel, ticks, labels)
    return np.polyfit(ticks, labels, 1)


def x_ticks(black, panel):
    _, bottom, left, right = panel
    return [sum(g) / len(g) for g in runs([x for x in range(left - 5, right + 6) if black[bottom + 3:bottom + 9, x].all()])]


def bar(blue, panel, a, b):
    top, bottom, left, right = panel
    inside = blue[top + 3:bottom - 2, left + 3:right - 2]
    first = np.where(inside.any(axis=0))[0][0]
    last = first
    while inside[:, last + 1].any():
        last += 1
    y = np.where(inside[:, first:last + 1].any(axis=1))[0][0] + top + 3
    return a * (y - 0.5) + b


def line_at_first_tick(blue, light, black, panel, a, b):
    top, bottom, left, right = panel
    xs = x_ticks(black, panel)
    centres = []
    for x in range(int(xs[0]) - 10, int(xs[1]) - 30):
        for r in runs(list(np.where(blue[bottom - 450:bottom - 2, x])[0] + bottom - 450)):
            if len(r) >= 2 * LINE_HALF_WIDTH:
                centres.append((x, (r[0] + r[-1]) / 2))
            elif light[r[0] - 1, x]:
                centres.append((x, r[0] + LINE_HALF_WIDTH))
            elif light[r[-1] + 1, x]:
                centres.append((x, r[-1] - LINE_HALF_WIDTH))
    px, py = np.array(centres).T
    slope, intercept = np.polyfit(px, py, 1)
    return a * (slope * xs[0] + intercept) + b, len(centres)


def main(folder):
    for chart, ticks in TICKS.items():
        im = np.array(Image.open(Path(folder) / chart).convert("RGB")).astype(int)
        black = im.sum(axis=2) < 90
        light = im.sum(axis=2) > 600  # white, or the anti-aliased rim of a line
        blue = np.abs(im - np.array(BLUE)).sum(axis=2) <= 40
        panels = frames(black)
        for (row, column), labels in ticks.items():
            panel = panels[3 * row + column]
            a, b = axis(black, panel, labels)
            if column == 2:
                print(f"{chart} {ROWS[row]} throughput (vLLM bar): {bar(blue, panel, a, b):.2f} req/s")
            else:
                value, n = line_at_first_tick(blue, light, black, panel, a, b)
                print(f"{chart} {ROWS[row]} TPOT at QPS 2 (vLLM line, {n} columns): {value:.2f} ms")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
