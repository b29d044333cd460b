#!/usr/bin/env bash
# Mock-server throughput run on one machine: the bare Vert.x SSE ceiling (best of two step periods), then the mock,
# each against the same closed-loop load generator. Usage: bench/mock-server/run.sh [STREAMS] [TOKENS] [TIME_SCALE]
# The mock JVM maps Java thread priorities to nice values (-XX:ThreadPriorityPolicy=1, needs root; the engine thread asks
# for MAX_PRIORITY) and collects with Shenandoah (pauses of a fraction of a millisecond; G1's young pauses of several ms
# stop the engine thread): MOCK_GC=g1 runs G1 instead. Every safepoint stops the engine thread, and on two saturated cores
# reaching one takes milliseconds, so the harness also turns off the JVM's periodic cleanup safepoint (once a second) and
# gives the JIT's inline-cache buffer room (a full one forces a safepoint, ~13 per 30 s here). RT_ENGINE=1 runs the engine
# thread on SCHED_FIFO as `serve --realtime-engine` does (needs root or CAP_SYS_NICE): CPU contention then no longer
# delays its wake-ups, and it spins the last 6 ms before each deadline. MEASURE=S (default 10) sets the measured window.
set -euo pipefail
cd "$(dirname "$0")/../.."
STREAMS=${1:-2000}
TOKENS=${2:-100}
SCALE=${3:-1}
WARMUP=3
MEASURE=${MEASURE:-10}
JAR=cli/target/infersim.jar
[ -f "$JAR" ] || mvn -B -q -pl cli -am package -DskipTests
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

# Shenandoah hands out TLABs under a spin-and-yield lock, and a real-time engine thread's yield never lets a
# lower-priority holder run on its core: a profile found the engine thread yielding there, which fits its 76-124 ms
# bursts of CPU time between steps. Large regions and fixed 2 MB TLABs make refills, and so such meetings, rare.
MOCK_JVM=(-Xmx512m -XX:+IgnoreUnrecognizedVMOptions -XX:+UnlockDiagnosticVMOptions -XX:GuaranteedSafepointInterval=0
  -XX:+UnlockExperimentalVMOptions -XX:InlineCacheBufferSize=1048576 -XX:TLABSize=2m -XX:-ResizeTLAB)
if [ "${MOCK_GC:-shenandoah}" = g1 ]; then MOCK_JVM+=(-XX:MaxGCPauseMillis=3); else MOCK_JVM+=(-XX:+UseShenandoahGC -XX:ShenandoahRegionSize=8m); fi
[ "$(id -u)" = 0 ] && MOCK_JVM+=(-XX:ThreadPriorityPolicy=1)
RT=$([ "${RT_ENGINE:-0}" = 1 ] && echo realtime || true)
java "${MOCK_JVM[@]}" -cp "$JAR" "$BENCH" mock 19102 "$SCALE" 2048 "$STREAMS" "$MEASURE" $RT >/tmp/infersim-mock.log 2>&1 &
MOCK=$!
for _ in $(seq 120); do curl -sf http://127.0.0.1:19102/health >/dev/null && break; kill -0 "$MOCK" 2>/dev/null || break; sleep 0.5; done
curl -sf http://127.0.0.1:19102/health >/dev/null || { echo "mock did not start; see /tmp/infersim-mock.log"; kill "$MOCK" 2>/dev/null; exit 1; }
[ -n "$RT" ] && echo "engine thread on SCHED_FIFO (serve --realtime-engine)"
echo "mock time scale ${SCALE}: $(run_load 19102)"
kill "$MOCK"
wait "$MOCK" 2>/dev/null || true
echo "mock engine: $(grep steps= /tmp/infersim-mock.log || echo 'no steady state reached')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
