#!/usr/bin/env bash
# Fixed-latency capacity: the seeds' FastAPI mock against `infersim serve --timing fixed`, both at TTFT 100 ms and
# ITL 50 ms, under the same closed loop (`infersim bench --max-concurrency N --request-rate inf`, 20 output tokens, so
# a request lasts 1.05 s). Prints, per server and concurrency, TTFT p99, ITL p99 and output tokens/s; a point holds
# when both p99s are within 5% of their settings (105 ms, 52.5 ms).
# Usage: bench/fixed-latency/run.sh [CONCURRENCY...]   (default 100 250 500 1000 2000; one unreported run of 200
# streams against each server warms both up first; needs python3-fastapi, python3-uvicorn)
set -euo pipefail
cd "$(dirname "$0")/../.."
LEVELS=${*:-100 250 500 1000 2000}
JAR=cli/target/infersim.jar
[ -f "$JAR" ] || mvn -B -q -pl cli -am package -DskipTests
OUT=$(mktemp -d)

bench() { # PORT MODEL N LABEL
  local n=$3
  java -Xmx1g -jar "$JAR" bench --base-url "http://127.0.0.1:$1" --endpoint /v1/chat/completions --model "$2" \
    --max-concurrency "$n" --request-rate inf --num-warmups "$n" --num-prompts $((n * 6)) --random-input-len 32 \
    --random-output-len 20 --ignore-eos --percentile-metrics ttft,itl --metric-percentiles 99 --max-send-lag-ms 1000 \
    --save-result --result-dir "$OUT" --result-filename "$4-$n.json" >/dev/null 2>&1 || true
  python3 - "$OUT/$4-$n.json" "$4" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["p99_ttft_ms"] <= 105 and r["p99_itl_ms"] <= 52.5
print("%-8s %6s  TTFT p99 %8.1f ms  ITL p99 %7.1f ms  %8.0f tok/s  %s" % (sys.argv[2], sys.argv[3], r["p99_ttft_ms"],
      r["p99_itl_ms"], r["output_throughput"], "holds" if ok else "misses"))
PY
}

/usr/bin/python3 bench/fixed-latency/fastapi_mock.py 19201 100 50 &
FASTAPI=$!
java -Xmx1g -jar "$JAR" serve --port 19202 --timing fixed --time-to-first-token 100 --inter-token-latency 50 \
  --max-num-seqs 4096 --max-waiting-requests 10000 >/dev/null 2>&1 &
INFERSIM=$!
trap 'kill $FASTAPI $INFERSIM 2>/dev/null || true' EXIT
for port in 19201 19202; do
  until curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null; do sleep 1; done
done
bench 19201 mock 200 warmup >/dev/null # JIT of the client and the JVM server, connection pools
bench 19202 llama-3.1-8b 200 warmup >/dev/null
for n in $LEVELS; do
  bench 19201 mock "$n" fastapi
  bench 19202 llama-3.1-8b "$n" infersim
done
