#!/usr/bin/env bash
# Heap soak of a 2-replica fleet behind its front door: does the heap's live size stay flat over an hour of traffic?
# Usage: bench/mock-server/soak.sh [MINUTES] [LOAD] [TIME_SCALE]   (defaults 60, 0.5, 0.5; OUT=DIR for the output)
#
# The fleet runs as `infersim serve --replicas 2 --router least-outstanding-requests` with -Xms64m -Xmx512m (serve's
# defaults). Its capacity is what `simulate` gives the same fleet and workload (random 256-token prompts, 128 output
# tokens, ignore_eos) at request rate inf; `bench` then sends LOAD x capacity x TIME_SCALE requests a second (Poisson)
# for MINUTES. Once a minute the server's live heap is measured: `jcmd PID GC.class_histogram` runs a full GC and sums
# what is still reachable; beside it the requests served and those in flight (running + waiting, the replicas'
# /metrics), since what is in flight is live too. The slope of live MB over minutes from minute 5 (JIT and pools warm
# up before) is the leak rate, by least squares and by Theil-Sen (the median of the slopes between every two samples,
# which a few samples taken while a busy machine held more in flight do not move) and with the requests in flight held
# constant (least squares of live MB on minute and in-flight: a busy machine's backlog is live, not leaked); flat is
# under 0.1 MB/min. The histograms of minute 5 and of the end are kept, and the classes that grew most between them
# printed. The jar is copied first, so rebuilding the checkout meanwhile does not touch the running JVMs (the script
# itself must not change while it runs: bash reads it as it goes).
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

counts() { # requests the replicas finished, and those they hold (running + waiting), from their /metrics
  for p in $((PORT + 1)) $((PORT + 2)); do curl -s "http://127.0.0.1:$p/metrics"; done |
    awk '/^vllm:request_success_total\{/ {n += $2} /^vllm:num_requests_(running|waiting)\{/ {f += $2}
      END {printf "%d,%d", n, f}'
}
echo "minute,served,in_flight,live_mb" > "$OUT/heap.csv"
start=$(date +%s)
for minute in $(seq 0 "$MINUTES"); do
  sleep $((start + minute * 60 - $(date +%s) > 0 ? start + minute * 60 - $(date +%s) : 0))
  kill -0 "$SERVER" 2>/dev/null || { echo "the server exited; see $OUT/server.log"; exit 1; }
  jcmd "$SERVER" GC.class_histogram > "$OUT/histogram.txt"
  [ "$minute" = 5 ] && cp "$OUT/histogram.txt" "$OUT/histogram-5.txt"
  live=$(awk '/^Total/ {printf "%.2f", $3 / 1048576}' "$OUT/histogram.txt")
  echo "$minute,$(counts),$live" | tee -a "$OUT/heap.csv"
done
wait "$CLIENT" || true

FROM=$((MINUTES >= 10 ? 5 : 0))
samples() { awk -F, -v from="$FROM" 'NR > 1 && $1 >= from {print $1, $4}' "$OUT/heap.csv"; }
ls=$(samples | awk '{n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2}
  END {printf "%.4f", (n * sxy - sx * sy) / (n * sxx - sx * sx)}')
ts=$(samples | awk 'BEGIN {n = 0} {x[n] = $1; y[n] = $2; n++} END {for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
  print (y[j] - y[i]) / (x[j] - x[i])}' | sort -g | awk '{s[++m] = $1} END {printf "%.4f", m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2}')
# live = a + b minute + c in_flight by least squares: b is the slope with what is in flight held constant
read -r lsf per <<< "$(awk -F, -v from="$FROM" 'NR > 1 && $1 >= from {n++; t = $1; f = $3; y = $4;
    st += t; sf += f; sy += y; stt += t * t; sff += f * f; stf += t * f; sty += t * y; sfy += f * y}
  END {a11 = n; a12 = st; a13 = sf; a22 = stt; a23 = stf; a33 = sff;
       det = a11 * (a22 * a33 - a23 * a23) - a12 * (a12 * a33 - a23 * a13) + a13 * (a12 * a23 - a22 * a13);
       b = (a11 * (sty * a33 - a23 * sfy) - sy * (a12 * a33 - a23 * a13) + a13 * (a12 * sfy - sty * a13)) / det;
       c = (a11 * (a22 * sfy - sty * a23) - a12 * (a12 * sfy - sty * a13) + sy * (a12 * a23 - a22 * a13)) / det;
       printf "%.4f %.1f", b, c * 1024}' "$OUT/heap.csv")"
verdict() { awk -v s="$1" 'BEGIN {print (s < 0.1 ? "flat" : "GROWING")}'; }
{
  echo "live heap slope from minute $FROM: $ls MB/min least squares ($(verdict "$ls")), $ts MB/min Theil-Sen ($(verdict "$ts"))"
  echo "with the requests in flight held constant: $lsf MB/min ($(verdict "$lsf")); $per KB live per request in flight"
} | tee "$OUT/verdict.txt"
if [ -f "$OUT/histogram-5.txt" ]; then
  echo "classes that grew most from minute 5 to the end (bytes, instances):" | tee -a "$OUT/verdict.txt"
  awk 'FNR == NR && $1 ~ /^[0-9]+:$/ {b[$4] = $3; c[$4] = $2; next}
       $1 ~ /^[0-9]+:$/ {printf "%d %d %s\n", $3 - b[$4], $2 - c[$4], $4}' "$OUT/histogram-5.txt" "$OUT/histogram.txt" |
    sort -rn | head -12 | tee -a "$OUT/verdict.txt"
fi
grep -E "^(Successful requests|Failed requests|Benchmark duration|Request throughput)" "$OUT/bench.log" | tee -a "$OUT/verdict.txt"
echo "output in $OUT"
