#!/usr/bin/env bash
# How much the benchmark client allocates per output token, over a whole `infersim bench` run against one mock: every
# byte allocated is young-GC work, and every GC a possible stall in the client's send schedule and TTFT. The total is
# read from the client JVM's GC log: what each young collection found in use beyond what the last one left, plus the
# heap in use at exit (a 64 MB young generation makes it collect often enough for that to be exact to a few MB).
#
# Usage: bench/benchmark-client/allocation.sh [LAUNCHER...]   (default: ./infersim; several alternate run by run)
#   RUNS=2 bench/benchmark-client/allocation.sh /tmp/before/infersim ./infersim    # before vs after
# Each run has its own --seed, so that no prompt is served from the mock's prefix cache. Other settings: PROMPTS (3000), RATE (200 req/s), INPUT (64) and OUTPUT (64) tokens, PORT (18125), OUT.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-2}
PROMPTS=${PROMPTS:-3000}
RATE=${RATE:-200}
INPUT=${INPUT:-64}
OUTPUT=${OUTPUT:-64}
PORT=${PORT:-18125}
OUT=${OUT:-bench/benchmark-client/results/allocation-$(date -u +%Y%m%dT%H%M%S)}
LAUNCHERS=("$@")
[ ${#LAUNCHERS[@]} -gt 0 ] || LAUNCHERS=(./infersim)
URL=http://127.0.0.1:$PORT
mkdir -p "$OUT"

! curl -s -o /dev/null "$URL/" || { echo "port $PORT is taken (another benchmark?): pass PORT=..."; exit 1; }
./infersim serve --port "$PORT" --gpu h100 --model llama-3.1-8b --max-num-seqs 1024 > "$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 240); do
  curl -sf -o /dev/null "$URL/health" && break
  kill -0 $SERVER 2> /dev/null || { cat "$OUT/server.log"; exit 1; }
  sleep 0.5
done

echo "| launcher | run | allocated MB | output tokens | bytes per output token |"
echo "|---|---|---|---|---|"
for run in $(seq "$RUNS"); do
  for i in "${!LAUNCHERS[@]}"; do
    launcher=${LAUNCHERS[$i]}
    prefix="$OUT/run$run-launcher$i"
    INFERSIM_JAVA_OPTS="-Xms512m -Xmx512m -Xmn64m -Xlog:gc,gc+heap+exit:file=$prefix.gc.log" "$launcher" bench \
      --base-url "$URL" --model llama-3.1-8b --num-prompts "$PROMPTS" --request-rate "$RATE" \
      --random-input-len "$INPUT" --random-output-len "$OUTPUT" --ignore-eos --seed "$run$i" > "$prefix.txt" 2>&1 \
      || [ $? -eq 3 ] # a run --validate calls invalid (send lag on a busy machine) still allocates what it allocates
    python3 - "$prefix.gc.log" "$prefix.txt" "$launcher" "$run" <<'PY'
import re, sys
gc_log, console, launcher, run = sys.argv[1:]
allocated, left = 0.0, 0.0
for line in open(gc_log):
    young = re.search(r'Pause Young.* (\d+)M->(\d+)M', line)
    if young:
        allocated += float(young.group(1)) - left
        left = float(young.group(2))
    exit_heap = re.search(r'garbage-first heap\s+total \d+K, used (\d+)K', line)
    if exit_heap:
        allocated += float(exit_heap.group(1)) / 1024 - left
tokens = int(re.search(r'Total generated tokens:\s+(\d+)', open(console).read()).group(1))
print(f"| {launcher} | {run} | {allocated:.0f} | {tokens:,} | {allocated * 1048576 / tokens:,.0f} |")
PY
  done
done
