#!/usr/bin/env bash
# Mock-server throughput run: bare Vert.x SSE ceiling, then the mock, each against the same closed-loop load generator
# on this machine. Usage: bench/mock-server/run.sh [STREAMS] [TOKENS_PER_REQUEST] [TIME_SCALE]
set -euo pipefail
cd "$(dirname "$0")/../.."
STREAMS=${1:-2000}
TOKENS=${2:-100}
SCALE=${3:-1}
WARMUP=10
MEASURE=20
JAR=cli/target/infersim.jar
[ -f "$JAR" ] || mvn -B -q -o install -DskipTests
BENCH=bench/mock-server/MockServerBench.java

java -Xmx512m -cp "$JAR" "$BENCH" bare 19101 "$TOKENS" >/tmp/infersim-bare.log 2>&1 &
BARE=$!
sleep 5
echo "bare:  $(java -Xmx512m -cp "$JAR" "$BENCH" load 19101 "$STREAMS" "$TOKENS" "$WARMUP" "$MEASURE" 2>/dev/null)"
kill "$BARE"

java -Xmx512m -cp "$JAR" "$BENCH" mock 19102 "$SCALE" 2048 "$((WARMUP + 3))" "$MEASURE" >/tmp/infersim-mock.log 2>/dev/null &
MOCK=$!
sleep 3
echo "mock:  $(java -Xmx512m -cp "$JAR" "$BENCH" load 19102 "$STREAMS" "$TOKENS" "$WARMUP" "$MEASURE" 2>/dev/null)"
wait "$MOCK"
echo "mock:  $(grep steps= /tmp/infersim-mock.log)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
