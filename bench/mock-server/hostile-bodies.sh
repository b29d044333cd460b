#!/usr/bin/env bash
# Replays the hostile-body corpus (mock-server/src/test/resources/.../HostileBodiesFuzzTestInputs) against
# `infersim serve` at -Xms64m -Xmx512m (./infersim's default heap), one body at a time: status, the time to the
# answer's head and to its whole body (a stream: its head), and the longest wait of four connections polling /health
# meanwhile (the event-loop stall other clients saw). A server that no longer answers /health within 2 s after a body is killed and started afresh for the next one.
# Usage: bench/mock-server/hostile-bodies.sh [NAME_PREFIX...]
#   FRESH=1: a fresh server for every body; SERVER_JAR=path: serve from another build (a baseline), the corpus and the
#   replaying client from this checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
CORPUS=mock-server/src/test/resources/dev/infersim/server/HostileBodiesFuzzTestInputs/everyBodyIsAnsweredInTimeWithoutStallingAnEventLoop
mvn -B -q -ntp -pl cli -am package -DskipTests
CP="cli/target/infersim.jar:$(ls mock-server/target/mock-server-*-tests.jar)"
JAR=${SERVER_JAR:-cli/target/infersim.jar}
PORT=$(shuf -i 20000-60000 -n 1)
SERVER=
LOG=$(mktemp)
trap '[ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null; rm -f "$LOG"' EXIT

start() { # $1: pooling or generate
  if [ "$1" = pooling ]; then
    java -Xms64m -Xmx512m -jar "$JAR" serve --port "$PORT" --runner pooling --model e5-mistral-7b --time-scale 100 >"$LOG" 2>&1 &
  else
    java -Xms64m -Xmx512m -jar "$JAR" serve --port "$PORT" --tool-call-parser hermes --enable-auto-tool-choice \
      --time-scale 100 >"$LOG" 2>&1 &
  fi
  SERVER=$!
  for _ in $(seq 1 300); do curl -sf -m 1 "http://127.0.0.1:$PORT/health" >/dev/null && return; sleep 0.1; done
  echo "server did not start:" >&2; cat "$LOG" >&2; exit 1
}
stop() { [ -n "$SERVER" ] && { kill -9 "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }; SERVER=; }

printf '%-56s %6s %9s %9s %14s  %s\n' body status "head ms" "whole ms" "health max ms" answer
KIND=
for f in $(ls "$CORPUS"); do
  if [ $# -gt 0 ]; then match=0; for p in "$@"; do [[ "$f" == "$p"* ]] && match=1; done; [ $match = 1 ] || continue; fi
  want=$([[ "$f" == embeddings-* ]] && echo pooling || echo generate)
  if [ "$want" != "$KIND" ] || [ "${FRESH:-0}" = 1 ]; then stop; start "$want"; KIND=$want; fi
  before=$(wc -l <"$LOG")
  java -cp "$CP" dev.infersim.server.HostileCorpus "http://127.0.0.1:$PORT" "$CORPUS" "$f"
  errors=$(tail -n +$((before + 1)) "$LOG" | grep -c -E 'OutOfMemoryError|StackOverflowError' || true)
  [ "$errors" = 0 ] || echo "  (server log: $errors lines naming OutOfMemoryError or StackOverflowError)"
  if ! curl -sf -m 2 "http://127.0.0.1:$PORT/health" >/dev/null; then
    echo "  (no /health answer within 2 s after it: restarted; $(grep -c OutOfMemoryError "$LOG" || true) OutOfMemoryError, $(grep -c StackOverflowError "$LOG" || true) StackOverflowError in its log)"
    stop; KIND=
  fi
done
stop
