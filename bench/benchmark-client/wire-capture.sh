#!/usr/bin/env bash
# Truth at the wire: a fixed-timing mock, warmed with `serve --warmup`, serves STREAMS concurrent streams
# from `bench --validate` while tcpdump records every packet on loopback. Per run, wire_capture.py holds the mock's
# truth (first_token_written_ms, received_ms, and the planned first_token_ms for contrast) and the client's TTFT
# against the packets, and the client's own estimate of its TTFT error p99 against the error the packets show. The
# machine's load (uptime) is recorded before and after each run: the figures mean what they say only on a quiet machine.
#
# Usage (root, for tcpdump): bench/benchmark-client/wire-capture.sh
#   RUNS=3 STREAMS=40 PROMPTS=400 OUTPUT_LEN=16 WARMUP=1500 PORT=18125 bench/benchmark-client/wire-capture.sh
# The mock's event loops run under SCHED_FIFO (`serve --realtime-event-loops`), so that they read each request as its
# bytes arrive and the truth's received_ms is the wire's; REALTIME_LOOPS=0 measures them under the normal scheduler.
# The mock's JVM gets a young generation large enough that no collection pauses its loops inside a run (with serve's
# own -Xms64m -Xmx512m one or two fell in each 10 s run, 5-11 ms quiet, up to 250 ms under load) and logs its
# collections to $OUT/mock-gc.log; MOCK_JAVA_OPTS replaces these options.
# WARMUP=0 measures a fresh mock. MOCK_CPUS and CLIENT_CPUS (taskset lists, e.g. 0 and 1) pin the mock and the client
# to CPUs of their own, as a harness under test would run beside its server on separate cores. Results: $OUT (default bench/benchmark-client/results/wire-TIMESTAMP), one
# run-N.json (bench result), run-N.jsonl (per request), run-N.pcap, run-N.wire.json (the figures) each, and table.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
STREAMS=${STREAMS:-40}
PROMPTS=${PROMPTS:-400}
OUTPUT_LEN=${OUTPUT_LEN:-16}
WARMUP=${WARMUP:-1500}
PORT=${PORT:-18125}
REALTIME_LOOPS=${REALTIME_LOOPS:-1}
OUT=${OUT:-bench/benchmark-client/results/wire-$(date -u +%Y%m%dT%H%M%S)}
command -v tcpdump > /dev/null || { echo "tcpdump is missing (apt-get install tcpdump)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "tcpdump needs root to capture on loopback"; exit 1; }
mkdir -p "$OUT"
URL=http://127.0.0.1:$PORT

./infersim --version > /dev/null # builds the jar first, so that the mock's start (and its warm-up) is all it waits for
# shellcheck source=mock.sh
START_WAIT_S=${START_WAIT_S:-600}
source bench/benchmark-client/mock.sh
INFERSIM=${MOCK_CPUS:+taskset -c $MOCK_CPUS }./infersim
CLIENT=${CLIENT_CPUS:+taskset -c $CLIENT_CPUS }./infersim
loops=--no-realtime-event-loops
[ "$REALTIME_LOOPS" = 0 ] || loops=--realtime-event-loops
mock_args=(--model llama-3.1-8b --timing fixed --max-num-seqs 256 --truth-log "$OUT/truth.jsonl" --warmup "$WARMUP" "$loops")
INFERSIM_JAVA_OPTS=${MOCK_JAVA_OPTS:-"-Xms512m -Xmx512m -Xmn384m -Xlog:gc:file=$OUT/mock-gc.log:time"} \
  start_mock "$PORT" "$OUT/server.log" "${mock_args[@]}"
grep -h "warmed up" "$OUT/server.log" || true

for run in $(seq "$RUNS"); do
  name=run-$run
  uptime > "$OUT/$name.load"
  tcpdump -i lo -n -s 0 --time-stamp-precision=nano -w "$OUT/$name.pcap" "tcp port $PORT" 2> "$OUT/$name.tcpdump.log" &
  CAPTURE=$!
  sleep 1
  $CLIENT bench --base-url "$URL" --model llama-3.1-8b --ignore-eos --validate --request-rate inf \
    --max-concurrency "$STREAMS" --num-prompts "$PROMPTS" --random-input-len 64 --random-output-len "$OUTPUT_LEN" \
    --seed "$run" --save-result --save-detailed --result-dir "$OUT" --result-filename "$name.json" \
    > "$OUT/$name.txt" 2>&1 || true
  sleep 1
  kill -INT "$CAPTURE"
  wait "$CAPTURE" || true
  uptime >> "$OUT/$name.load"
  [ -f "$OUT/$name.json" ] || { echo "run $name wrote no result; see $OUT/$name.txt"; exit 1; }
done
sleep 1 # the truth log's writer thread has the last rows on disk within milliseconds

{
  echo "CPUs: mock ${MOCK_CPUS:-any}, client ${CLIENT_CPUS:-any}; mock's event loops: $loops"
  echo
  echo "| run | load before / after (1 min) | requests | truth's first token written to packet p50 / p99 / max | planned first token to packet p50 / p99 / max | received after request packet p50 / p99 (bound covers) | client TTFT error vs truth p50 / p99 | client TTFT error vs packets p50 / p99 / max | client's estimate of its p99 | bounds it |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for run in $(seq "$RUNS"); do
    name=run-$run
    python3 bench/benchmark-client/wire_capture.py "$OUT/$name.pcap" "$OUT/$name.json" "$OUT/$name.jsonl" \
      "$OUT/truth.jsonl" > "$OUT/$name.wire.json"
    python3 - "$OUT/$name.wire.json" "$OUT/$name.load" "$run" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
loads = [l.split("load average:")[1].split(",")[0].strip() for l in open(sys.argv[2]) if "load average" in l]
f = lambda s, keys: " / ".join("%.2f" % s[k] if s.get(k) is not None else "-" for k in keys)
cover = w["truth_read_bound_covers_share"]
print("| %s | %s | %d | %s | %s | %s (%s) | %s | %s | %s | %s |" % (sys.argv[3], " / ".join(loads), w["requests"],
      f(w["truth_first_token_written_to_wire_ms"], ["p50", "p99", "max"]),
      f(w["truth_first_token_planned_to_wire_ms"], ["p50", "p99", "max"]),
      f(w["truth_received_after_request_packet_ms"], ["p50", "p99"]), "-" if cover is None else "%.0f%%" % (100 * cover),
      f(w["client_ttft_error_vs_truth_ms"], ["p50", "p99"]),
      f(w["client_ttft_error_vs_wire_ms"], ["p50", "p99", "max"]),
      "-" if w["client_self_estimate_p99_ms"] is None else "%.2f" % w["client_self_estimate_p99_ms"],
      {True: "yes", False: "no", None: "-"}[w["self_estimate_bounds_measured_p99"]]))
PY
  done
} | tee "$OUT/table.md"
