#!/usr/bin/env bash
# Heap soak of a 2-replica fleet behind its front door: does the heap's live size stay flat over an hour of traffic?
# Usage: bench/mock-server/soak.sh [MINUTES] [LOAD] [TIME_SCALE]   (defaults 60, 0.5, 0.5; OUT=DIR for the output)
#
# The fleet runs as `infersim serve --replicas 2 --router least-outstanding-requests` with -Xms64m -Xmx512m (serve's
# defaults). Its capacity is what `simulate` gives the same fleet and workload (random 256-token prompts, 128 output
# tokens, ignore_eos) at request rate inf; `bench` then sends LOAD x capacity x TIME_SCALE requests a second (Poisson)
# for MINUTES. Once a minute the server's live heap is measured: `jcmd PID GC.class_histogram` runs a full GC and sums
# what is still reachable. The slope of live MB over minutes (least squares, from minute 5: JIT and pools warm up
# before) is the leak rate; flat is under 0.1 MB/min. The jar is copied first, so rebuilding the checkout meanwhile
# does not touch the running JVMs.
set -euo pipefail
cd "$(dirname "$0")/../.."
MINUTES=${1:-60}
LOAD=${2:-0.5}
SCALE=${3:-0.5}
PORT=${PORT:-$((20000 + RANDOM % 20000))}
OUT=${OUT:-/tmp/infersim-soak-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
[ -f cli/target/infersim.jar ] || mvn -B -q -ntp -pl cli -am package -DskipTests
cp cli/target/infersim.jar "$OUT/infersim.jar"
printf '#!/bin/sh\nexec java ${INFERSIM_JAVA_OPTS:-} -jar "%s" "$@"\n' "$OUT/infersim.jar" > "$OUT/infersim"
chmod +x "$OUT/infersim"
export INFERSIM="$OUT/infersim"
WORKLOAD=(--model llama-3.1-8b --random-input-len 256 --random-output-len 128 --ignore-eos)

capacity=$(INFERSIM_JAVA_OPTS="-Xmx1g" "$INFERSIM" simulate --gpu h100 --replicas 2 --router least-outstanding-requests \
  --request-rate inf --num-prompts 5000 "${WORKLOAD[@]}" | awk '/^Request throughput/ {print $4}')
rate=$(awk -v c="$capacity" -v l="$LOAD" -v s="$SCALE" 'BEGIN {printf "%.2f", c * l * s}')
prompts=$(awk -v r="$rate" -v m="$MINUTES" 'BEGIN {printf "%d", r * m * 60}')
echo "capacity ${capacity} req/s (model time); ${LOAD} of it at time scale ${SCALE}: ${rate} req/s, ${prompts} requests"

# shellcheck source=../benchmark-client/mock.sh
source bench/benchmark-client/mock.sh
INFERSIM_JAVA_OPTS="-Xms64m -Xmx512m" start_mock "$PORT" "$OUT/server.log" --gpu h100 --model llama-3.1-8b \
  --replicas 2 --router least-outstanding-requests --time-scale "$SCALE"
INFERSIM_JAVA_OPTS="-Xmx3g -XX:TieredStopAtLevel=1" "$INFERSIM" bench --base-url "http://127.0.0.1:$PORT" \
  "${WORKLOAD[@]}" --request-rate "$rate" --num-prompts "$prompts" --duration $((MINUTES * 60)) \
  --save-result --result-dir "$OUT" --result-filename soak.json > "$OUT/bench.log" 2>&1 &
CLIENT=$!
trap 'kill $CLIENT $SERVER 2>/dev/null || true' EXIT

served() { # requests the replicas finished, from their /metrics
  for p in $((PORT + 1)) $((PORT + 2)); do curl -s "http://127.0.0.1:$p/metrics"; done |
    awk '/^vllm:request_success_total\{/ {n += $2} END {printf "%d", n}'
}
echo "minute,served,live_mb" > "$OUT/heap.csv"
start=$(date +%s)
for minute in $(seq 0 "$MINUTES"); do
  sleep $((start + minute * 60 - $(date +%s) > 0 ? start + minute * 60 - $(date +%s) : 0))
  kill -0 "$SERVER" 2>/dev/null || { echo "the server exited; see $OUT/server.log"; exit 1; }
  live=$(jcmd "$SERVER" GC.class_histogram | awk '/^Total/ {printf "%.2f", $3 / 1048576}')
  echo "$minute,$(served),$live" | tee -a "$OUT/heap.csv"
done
wait "$CLIENT" || true

awk -F, -v from=$((MINUTES >= 10 ? 5 : 0)) 'NR > 1 && $1 >= from {n++; sx += $1; sy += $3; sxx += $1 * $1; sxy += $1 * $3}
  END {slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
       printf "live heap slope from minute %d: %.4f MB/min (%s)\n", from, slope, slope < 0.1 ? "flat" : "GROWING"}' \
  "$OUT/heap.csv" | tee "$OUT/verdict.txt"
grep -E "^(Successful requests|Failed requests|Benchmark duration|Request throughput)" "$OUT/bench.log" | tee -a "$OUT/verdict.txt"
echo "output in $OUT"
