#!/usr/bin/env bash
# Simulator speed and memory benchmark: 1,000,000 chat requests on llama-3.1-8b / h100 at 80% of capacity,
# per-request detail streamed to a temporary JSONL file (deleted afterwards). See README.md.
# Usage: bench/simulator/run.sh [profile] [requests] [load fraction]    (extra JVM flags via JAVA_OPTS)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
mvn -B -q test-compile -pl simulator >&2
mvn -B -q dependency:build-classpath -pl simulator -Dmdep.outputFile="$root/simulator/target/bench.classpath" >&2
detail="$(mktemp "${TMPDIR:-/tmp}/infersim-bench-XXXXXX.jsonl")"
trap 'rm -f "$detail"' EXIT
/usr/bin/time -f "max RSS %M KB, %e s wall, %U s user, %S s sys" \
  java -Xmx2g ${JAVA_OPTS:--XX:+UseSerialGC} \
  -cp "simulator/target/classes:simulator/target/test-classes:$(cat simulator/target/bench.classpath)" \
  dev.infersim.sim.SimulatorBenchmark "${1:-chat}" "${2:-1000000}" "${3:-0.8}" "$detail"
