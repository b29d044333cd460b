#!/usr/bin/python3
"""Compares the outputs of wall-clock commands (bench, sweep, merge, demo) run by two builds, on what does not depend
on timing: each JSON file's shape and its deterministic values, and the terminal output with numbers masked.

  shapes.py render FILE                  print what is compared of one file
  shapes.py compare WORK NAME...         compare WORK/before/runI/NAME with WORK/after/runJ/NAME for every pairing

A file renders to lines. JSON (and each line of JSON Lines): one line per value in document order, its key path and
type; strings and booleans with their value (numbers in strings masked), numbers by type only except the config
echoed back (EXACT_NUMBER_KEYS); an array of numbers is one line with its element types; an array of strings one line
per element, unindexed; an array of objects or arrays is indexed up to INDEXED_UP_TO elements, and a longer one shows
each distinct element shape once ([*]), so its length, which follows timing, is not compared. Terminal output (*.out,
*.err) and exit codes (*.exit): lines in order, numbers masked, runs of spaces squeezed. Other files (HTML, HdrHistogram
logs): their presence only.

A difference is a line removed or added (difflib) between a BEFORE run and an AFTER run. With several runs a side, a
difference counts only when the very same line is removed or added in every pairing: a null where a number usually is,
a warning a slow moment printed, a run flagged invalid once, are timing accidents of one run, not of the build.
A file that differs in every pairing but never at the same line is named, not counted: timing moved it each time.
"""
import difflib
import itertools
import json
import os
import re
import sys

# Numbers that echo the command's own configuration: compared exactly.
EXACT_NUMBER_KEYS = {
    "num_prompts", "request_rate", "burstiness", "max_concurrency", "request_rates", "concurrencies", "seed",
    "time_scale", "infersim_time_scale", "slo_ttft_p99_ms", "percentiles",
    "random_input_len", "random_output_len", "random_range_ratio", "random_prefix_len",
}
# Objects whose every number is configuration.
EXACT_NUMBER_BLOCKS = {"infersim_workload", "infersim_goodput_slos", "goodput_config"}
# Strings that follow timing or randomness (the wall-clock date, random ids, generated words): compared by type only.
VOLATILE_STRING_KEYS = {"date", "request_id", "generated_text", "generated_texts", "infersim_start_time",
                        "infersim_end_time"}
INDEXED_UP_TO = 32
# A number standing alone (a measured value), not one inside a name such as llama-3.1-8b, cl100k_base, /v1 or G1.
NUMBER = re.compile(r"(?<![\w.])(?<![A-Za-z]-)[+-]?\d+(?:[.,]\d+)*(?:[eE][+-]?\d+)?(?!\w|\.\d)")
HEX_ID = re.compile(r"[0-9a-fA-F]{16,}")
WORK_DIR = re.compile(r"/(?:before|after)/run\d+/")  # where same-shapes.sh runs each side


def mask(text):
    return NUMBER.sub("9", HEX_ID.sub("<hex>", WORK_DIR.sub("/SIDE/RUN/", text)))


def type_of(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def shape(value, path, exact, out):
    """Appends the lines of value at path to out; exact: its numbers are configuration."""
    key = re.sub(r"\[[^]]*\]$", "", path.rsplit(".", 1)[-1])
    kind = type_of(value)
    if kind == "object":
        out.append(f"{path} object" + ("" if value else " (empty)"))
        for k, v in value.items():
            shape(v, f"{path}.{k}", exact or k in EXACT_NUMBER_BLOCKS, out)
    elif kind == "array":
        if all(type_of(v) in ("number", "null") for v in value):
            types = sorted({type_of(v) for v in value})
            if exact or key in EXACT_NUMBER_KEYS:
                out.append(f"{path} array = {json.dumps(value)}")
            else:
                out.append(f"{path} array of {'|'.join(types) if types else 'nothing'}")
        elif key not in VOLATILE_STRING_KEYS and all(type_of(v) in ("string", "boolean", "null") for v in value):
            # texts (warnings, notes, reasons) one line each without an index, so that one more note is one more line
            out.append(f"{path} array of text")
            for v in value:
                shape(v, f"{path}[]", exact, out)
        elif key not in VOLATILE_STRING_KEYS and len(value) <= INDEXED_UP_TO:
            out.append(f"{path} array of {len(value)}")
            for i, v in enumerate(value):
                shape(v, f"{path}[{i}]", exact, out)
        else:
            out.append(f"{path} array, distinct element shapes:")
            seen = []
            for v in value:
                lines = []
                shape(v, f"{path}[*]", exact, lines)
                if lines not in seen:
                    seen.append(lines)
                    out.extend(lines)
    elif kind == "number":
        out.append(f"{path} number = {json.dumps(value)}" if exact or key in EXACT_NUMBER_KEYS else f"{path} number")
    elif kind == "string":
        out.append(f"{path} string" if key in VOLATILE_STRING_KEYS else f"{path} string = {json.dumps(mask(value))}")
    else:
        out.append(f"{path} {kind}" + (f" = {json.dumps(value)}" if kind == "boolean" else ""))


def render(path):
    if not os.path.exists(path):
        return ["(no such file)"]
    name = os.path.basename(path)
    if name.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            try:
                document = json.load(f)
            except ValueError as e:
                return [f"(not JSON: {mask(str(e))})"]
        out = []
        shape(document, "$", False, out)
        return out
    if name.endswith(".jsonl"):
        with open(path, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
        out = []
        shape(records, "$lines", False, out)
        return out
    if name.endswith((".out", ".err", ".exit")):
        with open(path, encoding="utf-8", errors="replace") as f:
            return [re.sub(r" {2,}", " ", mask(line.rstrip())) for line in f]
    return ["(present)"]


def changes(before, after):
    """The lines removed from before and added in after, as a set of ('-', line) and ('+', line)."""
    found = set()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            found.update(("-", line) for line in before[i1:i2])
            found.update(("+", line) for line in after[j1:j2])
    return found


def runs(work, side):
    return sorted(d for d in os.listdir(os.path.join(work, side)) if d.startswith("run"))


def compare(work, names):
    before_runs, after_runs = runs(work, "before"), runs(work, "after")
    pairings = list(itertools.product(before_runs, after_runs))
    same = differ = 0
    for name in names:
        files = set()
        for side, side_runs in (("before", before_runs), ("after", after_runs)):
            for run in side_runs:
                root = os.path.join(work, side, run, name)
                files.update(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
        lines = {}
        for side, side_runs in (("before", before_runs), ("after", after_runs)):
            for run in side_runs:
                for f in files:
                    lines[side, run, f] = render(os.path.join(work, side, run, name, f))
        reports = []
        unstable = []
        accidents = 0
        for f in sorted(files):
            per_pairing = [changes(lines["before", b, f], lines["after", a, f]) for b, a in pairings]
            common = set.intersection(*per_pairing)
            if common:
                reports.append((f, sorted(common, key=lambda c: (c[1], c[0]))))
            elif all(per_pairing):
                unstable.append(f)
            accidents += len(set.union(*per_pairing) - common)
        compared = f"{len(files)} files, {sum(len(lines['before', before_runs[0], f]) for f in files)} lines"
        if reports:
            differ += 1
            print(f"DIFFERS {name:<22} {compared}")
            for f, found in reports:
                print(f"    {f}:")
                for sign, line in found[:20]:
                    print(f"      {sign} {line}")
                if len(found) > 20:
                    print(f"      ... {len(found) - 20} more")
        else:
            same += 1
            note = f"; {accidents} lines differ in some pairings only (timing)" if accidents else ""
            if unstable:
                note += f"; differing in every pairing, never at the same line (timing): {', '.join(unstable)}"
            print(f"same    {name:<22} {compared}{note}")
    print(f"{same} commands the same, {differ} differ ({len(before_runs)} x {len(after_runs)} runs compared)")
    return differ == 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "render":
        for path in argv[1:]:
            print("\n".join(render(path)))
        return 0
    if len(argv) >= 2 and argv[0] == "compare":
        return 0 if compare(argv[1], argv[2:]) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
