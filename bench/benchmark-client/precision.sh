#!/usr/bin/env bash
# Precision of the benchmark client against the infersim mock on this machine: per run, the send lag (actual minus
# scheduled send) and the TTFT error (client TTFT minus the mock's own ground truth), beside the machine's scheduling
# noise. Every run is a fresh client JVM started as a user starts it (the `infersim` launcher); one warm mock serves all.
#
# Usage: bench/benchmark-client/precision.sh [LAUNCHER...]     (default: ./infersim)
#   RATES="50 200" RUNS=10 SECONDS_PER_RUN=60 bench/benchmark-client/precision.sh      # the full matrix (defaults)
#   RUNS=3 SECONDS_PER_RUN=20 bench/benchmark-client/precision.sh /tmp/old/infersim ./infersim   # before vs after
# With several launchers (each an `infersim` script of another checkout) the runs alternate between them (A B A B ...),
# so that the machine's load hits all alike. Other settings: WARMUP_S (5, sent but not measured), PREWARM (20000
# requests that warm the mock's JIT first), PORT (18124), OUT (results directory), CLIENT_EXTRA (JVM flags added to
# the client's own, through JDK_JAVA_OPTIONS; @RUN@ stands for the run's path prefix, e.g.
# CLIENT_EXTRA='-XX:StartFlightRecording=filename=@RUN@.jfr'), MOCK_JAVA_OPTS.
set -euo pipefail
cd "$(dirname "$0")/../.."
RATES=${RATES:-50 200}
RUNS=${RUNS:-10}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-60}
WARMUP_S=${WARMUP_S:-5}
PREWARM=${PREWARM:-20000}
PORT=${PORT:-18124}
OUT=${OUT:-bench/benchmark-client/results/precision-$(date -u +%Y%m%dT%H%M%S)}
CLIENT_EXTRA=${CLIENT_EXTRA:-}
LAUNCHERS=("$@")
[ ${#LAUNCHERS[@]} -gt 0 ] || LAUNCHERS=(./infersim)
URL=http://127.0.0.1:$PORT
mkdir -p "$OUT"

# The mock as bench/mock-server tunes it: Shenandoah (sub-millisecond pauses), no periodic cleanup safepoint, room in
# the inline-cache buffer, so that the server's own stalls stay out of the TTFT error as far as they can.
MOCK_JAVA_OPTS=${MOCK_JAVA_OPTS:--Xms512m -Xmx512m -XX:+UseShenandoahGC -XX:+UnlockDiagnosticVMOptions
  -XX:GuaranteedSafepointInterval=0 -XX:+UnlockExperimentalVMOptions -XX:InlineCacheBufferSize=1048576}
# shellcheck source=mock.sh
source bench/benchmark-client/mock.sh
INFERSIM_JAVA_OPTS="$MOCK_JAVA_OPTS" start_mock "$PORT" "$OUT/server.log" --gpu h100 --model llama-3.1-8b \
  --max-num-seqs 1024
prewarm_mock "$PORT" "$PREWARM" "$OUT/prewarm.txt"

seed=0
for rate in $RATES; do
  prompts=$(( rate * (SECONDS_PER_RUN + WARMUP_S) * 2 ))
  for run in $(seq "$RUNS"); do
    for i in "${!LAUNCHERS[@]}"; do
      seed=$((seed + 1)) # new prompts every run: a prompt the mock has cached would shorten its TTFT
      name="c$i-r$rate-$run"
      load=$(cut -d' ' -f1 /proc/loadavg)
      echo "$load" > "$OUT/$name.load"
      JDK_JAVA_OPTIONS="${CLIENT_EXTRA//@RUN@/$OUT/$name}" "${LAUNCHERS[$i]}" bench --base-url "$URL" --model llama-3.1-8b \
        --ignore-eos --validate --request-rate "$rate" --duration "$SECONDS_PER_RUN" --warmup-duration "$WARMUP_S" \
        --num-prompts "$prompts" --random-input-len 64 --random-output-len 16 --seed "$seed" --request-timeout 60 \
        --save-result --result-dir "$OUT" --result-filename "$name.json" > "$OUT/$name.txt" 2>&1 || true
      [ -f "$OUT/$name.json" ] || { echo "run $name wrote no result; see $OUT/$name.txt"; exit 1; }
    done
  done
done

# One row per run, then per client and rate the worst maximum and the median p99 over its runs.
{
  echo "| client | rate | run | load 1m | noise at start p99 / max | noise in run p99 / max | send lag p99 | send lag max | TTFT error p99 | TTFT error max | client GCs / ms | loops on / waiting for CPU (ms) | verdict |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for rate in $RATES; do for run in $(seq "$RUNS"); do for i in "${!LAUNCHERS[@]}"; do
    name="c$i-r$rate-$run"
    jq -r --arg c "${LAUNCHERS[$i]}" --arg rate "$rate" --arg run "$run" --arg load "$(cat "$OUT/$name.load")" '
      def ms: . * 1000 | round / 1000;
      "| \($c) | \($rate) | \($run) | \($load) | \(.infersim_scheduling_noise_ms.calibration.p99 | ms) / \(.infersim_scheduling_noise_ms.calibration.max | ms) | \(.infersim_scheduling_noise_ms.during_run.p99 | ms) / \(.infersim_scheduling_noise_ms.during_run.max | ms) | \(.infersim_send_lag_ms.p99 | ms) | \(.infersim_send_lag_ms.max | ms) | \(.infersim_ground_truth.ttft_abs_error_ms.p99 | ms) | \(.infersim_ground_truth.ttft_abs_error_ms.max | ms) | \(.infersim_client_gc // null | if . then "\(.collections) / \(.time_ms)" else "-" end) | \(.infersim_client_loops_ms // null | if . then "\(.on_cpu | round) / \(.waiting_for_cpu | round)" else "-" end) | \(if .infersim_valid then "valid" else "invalid" end)\(if .infersim_send_lag_verdict then " (send lag: \(.infersim_send_lag_verdict.cause))" else "" end) |"' \
      "$OUT/$name.json"
  done; done; done
  echo
  echo "| client | rate | runs | send lag max (worst run) | send lag p99 (median run) | TTFT error max (worst run) | TTFT error p99 (median run) | valid runs |"
  echo "|---|---|---|---|---|---|---|---|"
  for rate in $RATES; do for i in "${!LAUNCHERS[@]}"; do
    jq -s -r --arg c "${LAUNCHERS[$i]}" --arg rate "$rate" '
      def ms: . * 1000 | round / 1000;
      def median: sort | .[(length - 1) / 2 | floor];
      "| \($c) | \($rate) | \(length) | \(map(.infersim_send_lag_ms.max) | max | ms) | \(map(.infersim_send_lag_ms.p99) | median | ms) | \(map(.infersim_ground_truth.ttft_abs_error_ms.max) | max | ms) | \(map(.infersim_ground_truth.ttft_abs_error_ms.p99) | median | ms) | \(map(select(.infersim_valid)) | length) |"' \
      "$OUT"/c"$i"-r"$rate"-*.json
  done; done
} | tee "$OUT/table.md"
echo "results in $OUT (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
