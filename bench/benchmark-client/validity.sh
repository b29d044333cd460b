#!/usr/bin/env bash
# How often `infersim bench` calls a run invalid that is not: the README's bench example (10 req/s, 500 requests of
# 1024 tokens in and 128 out, --validate) and its sweep example (5, 10, 20 and 40 req/s, 15 s of sends each), run
# after run against one mock on this machine, by each launcher in turn (an `infersim` script of another checkout
# compares before and after). Per run: the verdict and its first reason, beside what the client's timing error and
# the mock's ground truth say. With BUSY=N, N processes that spin on a CPU run beside every run: a busy machine.
#
# Usage: bench/benchmark-client/validity.sh [LAUNCHER...]     (default: ./infersim)
# Settings: RUNS (10 bench runs per launcher), SWEEPS (1 sweep per launcher), BUSY (0), PORT (18126), OUT, LOCK (a
# command prefix for each run, e.g. "flock -x /var/lock/bench").
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-10}
SWEEPS=${SWEEPS:-1}
BUSY=${BUSY:-0}
PORT=${PORT:-18126}
OUT=$(realpath -m "${OUT:-bench/benchmark-client/results/validity-$(date -u +%Y%m%dT%H%M%S)}")
LOCK=${LOCK:-}
LAUNCHERS=("$@")
[ ${#LAUNCHERS[@]} -gt 0 ] || LAUNCHERS=(./infersim)
URL=http://127.0.0.1:$PORT
mkdir -p "$OUT"

# shellcheck source=mock.sh
source bench/benchmark-client/mock.sh
start_mock "$PORT" "$OUT/server.log" --model llama-3.1-8b --gpu h100

# Runs CMD... under LOCK, with BUSY spinning processes beside it.
measured() {
  $LOCK bash -c 'pids=(); for _ in $(seq '"$BUSY"'); do (while :; do :; done) & pids+=($!); done
    "$@"; rc=$?; for p in "${pids[@]}"; do kill "$p"; done; exit $rc' _ "$@"
}

seed=100
for run in $(seq "$RUNS"); do
  for i in "${!LAUNCHERS[@]}"; do
    seed=$((seed + 1)) # new prompts every run: the mock's prefix cache must not serve an earlier run's
    name="bench-c$i-$run"
    cut -d' ' -f1 /proc/loadavg > "$OUT/$name.load"
    measured "${LAUNCHERS[$i]}" bench --base-url "$URL" --model llama-3.1-8b --request-rate 10 --num-prompts 500 \
      --validate --seed "$seed" --save-result --result-dir "$OUT" --result-filename "$name.json" \
      > "$OUT/$name.txt" 2>&1 || true
    [ -f "$OUT/$name.json" ] || { echo "run $name wrote no result; see $OUT/$name.txt"; exit 1; }
  done
done
for run in $(seq "$SWEEPS"); do
  for i in "${!LAUNCHERS[@]}"; do
    seed=$((seed + 10))
    name="sweep-c$i-$run"
    cut -d' ' -f1 /proc/loadavg > "$OUT/$name.load"
    measured "${LAUNCHERS[$i]}" sweep --base-url "$URL" --model llama-3.1-8b --request-rates 5,10,20,40 \
      --duration 15 --goodput ttft:200 --seed "$seed" --save-result --result-dir "$OUT" \
      --result-filename "$name.json" > "$OUT/$name.txt" 2>&1 || true
    [ -f "$OUT/$name.json" ] || { echo "sweep $name wrote no result; see $OUT/$name.txt"; exit 1; }
  done
done

python3 - "$OUT" "$RUNS" "$SWEEPS" "${LAUNCHERS[@]}" << 'EOF' | tee "$OUT/table.md"
import json, sys

out, runs, sweeps, launchers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]

def ms(d, *path):
    for k in path:
        d = d.get(k) if isinstance(d, dict) else None
    return "-" if d is None else f"{d:.2f}"

def row(client, label, load, r):
    reasons = r.get("infersim_invalid_reasons") or []
    verdict = "valid" if r.get("infersim_valid") else "invalid: " + (reasons[0][:90] + "..." if reasons else "?")
    print(f"| {client} | {label} | {load} | {ms(r, 'infersim_send_lag_ms', 'p99')} "
          f"| {ms(r, 'infersim_read_delay_ms', 'p99')} | {ms(r, 'median_ttft_ms')} "
          f"| {ms(r, 'infersim_ground_truth', 'ttft_abs_error_ms', 'p99')} | {verdict} |")
    return bool(r.get("infersim_valid"))

print("| client | run | load 1m | send lag p99 (ms) | read delay p99 (ms) | TTFT p50 (ms) "
      "| TTFT error vs mock p99 (ms) | verdict |")
print("|---|---|---|---|---|---|---|---|")
tally = {c: [0, 0, 0, 0] for c in launchers}
for run in range(1, runs + 1):
    for i, c in enumerate(launchers):
        name = f"bench-c{i}-{run}"
        ok = row(c, f"bench {run}", open(f"{out}/{name}.load").read().strip(), json.load(open(f"{out}/{name}.json")))
        tally[c][0] += ok
        tally[c][1] += 1
for run in range(1, sweeps + 1):
    for i, c in enumerate(launchers):
        name = f"sweep-c{i}-{run}"
        load = open(f"{out}/{name}.load").read().strip()
        for point in json.load(open(f"{out}/{name}.json"))["runs"]:
            ok = row(c, f"sweep {run} at {point['request_rate']} req/s", load, point)
            tally[c][2] += ok
            tally[c][3] += 1
print()
print("| client | bench runs valid | sweep points valid |")
print("|---|---|---|")
for c, (bv, bn, sv, sn) in tally.items():
    print(f"| {c} | {bv} of {bn} | {sv} of {sn} |")
EOF
echo "results in $OUT (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
