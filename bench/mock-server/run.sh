#!/usr/bin/env bash
# Mock-server throughput run on one machine: the bare Vert.x SSE ceiling (best of two step periods), then the mock,
# each against the same closed-loop load generator. Usage: bench/mock-server/run.sh [STREAMS] [TOKENS] [TIME_SCALE]
set -euo pipefail
cd "$(dirname "$0")/../.."
STREAMS=${1:-2000}
TOKENS=${2:-100}
SCALE=${3:-1}
WARMUP=3
MEASURE=10
JAR=cli/target/infersim.jar
[ -f "$JAR" ] || mvn -B -q -o install -DskipTests
BENCH=bench/mock-server/MockServerBench.java
run_load() { java -Xmx512m -cp "$JAR" "$BENCH" load "$1" "$STREAMS" "$TOKENS" "$WARMUP" "$MEASURE" 2>/dev/null; }

for PERIOD in 20 40; do
  java -Xmx512m -cp "$JAR" "$BENCH" bare 19101 "$TOKENS" "$PERIOD" >/dev/null 2>&1 &
  BARE=$!
  sleep 5
  echo "bare period ${PERIOD} ms: $(run_load 19101)"
  kill "$BARE"
  wait "$BARE" 2>/dev/null || true
done

java -Xmx512m -cp "$JAR" "$BENCH" mock 19102 "$SCALE" 2048 "$STREAMS" "$MEASURE" >/tmp/infersim-mock.log 2>/dev/null &
MOCK=$!
until curl -sf http://127.0.0.1:19102/health >/dev/null; do sleep 0.5; done
echo "mock time scale ${SCALE}: $(run_load 19102)"
kill "$MOCK"
wait "$MOCK" 2>/dev/null || true
echo "mock engine: $(grep steps= /tmp/infersim-mock.log || echo 'no steady state reached')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
