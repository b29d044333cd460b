#!/usr/bin/env bash
# Shows that a refactoring changed nothing a user sees of the commands that run on the wall clock (bench against the
# mock, bench --shard with merge, sweep, a closed loop, a refused endpoint, demo --quick), whose numbers differ from run
# to run: shapes.py compares each JSON file's key paths, types and deterministic values, and the terminal output with
# numbers masked, between the two builds (see README.md).
#
#   bench/refactor/same-shapes.sh BEFORE AFTER
#
# BEFORE and AFTER are each an infersim.jar or a checkout (whose cli/target/infersim.jar is built when missing).
# RUNS (default 1) runs each side that many times, alternating sides; a difference then counts only when it shows in
# every pairing of a BEFORE run with an AFTER run, so that one run's timing accident is not taken for the build's.
# Each run of a side starts its own mock (serve --port 0, fixed timing) and stops it at the end.
# WORK (default: a new temporary directory) keeps the outputs: WORK/before/runI/NAME and WORK/after/runI/NAME.
# Exits 0 when every command is the same, 1 otherwise (and prints the differing lines).
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BEFORE AFTER (each an infersim.jar or a checkout)" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=jar.sh
source "$here/jar.sh"
before_jar="$(jar_of "$1")"
after_jar="$(jar_of "$2")"
runs="${RUNS:-1}"
work="${WORK:-$(mktemp -d /tmp/same-shapes.XXXXXX)}"

# name | arguments. A name given several times is one command of several steps, run in order in one directory (the
# working directory, where result files are written); step K's terminal output is K.out, K.err and its exit code K.exit.
# @URL@ is the side's mock, @REFUSED@ a local port nothing listens on.
commands() {
  local wl="--model llama-3.1-8b --dataset-name random --random-input-len 128 --random-output-len 16 --seed 7 --client-warmups 16"
  cat <<EOC
bench-open | bench $wl --base-url @URL@ --num-prompts 200 --request-rate 40 --save-result --save-detailed --metadata k=v --goodput ttft:500 --result-filename result.json
bench-shards | bench $wl --base-url @URL@ --num-prompts 200 --request-rate 40 --shard 0/2 --save-result --result-filename shard0.json
bench-shards | bench $wl --base-url @URL@ --num-prompts 200 --request-rate 40 --shard 1/2 --save-result --result-filename shard1.json
bench-shards | merge --save-result --result-filename merged.json shard0.json shard1.json
sweep | sweep $wl --base-url @URL@ --num-prompts 100 --request-rates 10,20,40 --goodput ttft:500 --save-result --result-filename sweep.json
bench-closed-loop | bench $wl --base-url @URL@ --num-prompts 60 --max-concurrency 4 --request-rate inf --save-result --result-filename result.json
bench-refused | bench $wl --base-url @REFUSED@ --num-prompts 10 --request-rate 10 --save-result --result-filename result.json
demo-quick | demo --quick --save-result demo.json --html demo.html
EOC
}

mock_pid=""
mock_url=""
stop_mock() {
  if [[ -n "$mock_pid" ]]; then
    kill "$mock_pid" 2>/dev/null || true
    wait "$mock_pid" 2>/dev/null || true
    mock_pid=""
  fi
}
trap stop_mock EXIT

# start_mock JAR LOG: starts a mock on a free port with fixed timing (TTFT 100 ms, ITL 40 ms: long beside the client's
# own delays on a busy machine, which would otherwise flag runs invalid at random; short enough for runs of seconds)
# and sets mock_url once it listens. It runs in this shell, not in a $(...) subshell, so that stop_mock knows its pid.
start_mock() {
  local jar="$1" log="$2" port=""
  java -Xmx1g -jar "$jar" serve --port 0 --timing fixed --time-to-first-token 100 --inter-token-latency 40 \
    --max-num-seqs 256 --seed 1 >"$log" 2>&1 &
  mock_pid=$!
  for _ in $(seq 1 120); do
    port="$(sed -n -E 's|.* at http://127\.0\.0\.1:([0-9]+)/v1 .*|\1|p' "$log" | head -1)"
    if [[ -n "$port" ]] && curl -sf "http://127.0.0.1:$port/health" >/dev/null; then
      mock_url="http://127.0.0.1:$port"
      return
    fi
    kill -0 "$mock_pid" 2>/dev/null || break
    sleep 0.5
  done
  echo "$0: the mock did not start (see $log)" >&2
  exit 1
}

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# run_side SIDE RUN JAR
run_side() {
  local side="$1" run="$2" jar="$3" url refused name args dir step rc
  mkdir -p "$work/$side/$run"
  start_mock "$jar" "$work/$side/$run/mock.log"
  url="$mock_url"
  refused="http://127.0.0.1:$(free_port)"
  echo "$side $run: mock at $url" >&2
  while IFS='|' read -r name args; do
    name="$(echo "$name" | xargs)"
    args="${args//@URL@/$url}"
    args="${args//@REFUSED@/$refused}"
    dir="$work/$side/$run/$name"
    mkdir -p "$dir"
    step=$(( $(find "$dir" -name '*.exit' | wc -l) + 1 ))
    rc=0
    # shellcheck disable=SC2086 # the arguments are words
    (cd "$dir" && exec java -Xmx1g -jar "$jar" $args >"$step.out" 2>"$step.err") || rc=$?
    echo "$rc" >"$dir/$step.exit"
  done < <(commands)
  stop_mock
}

echo "before: $before_jar" >&2
echo "after:  $after_jar" >&2
for i in $(seq 1 "$runs"); do
  run_side before "run$i" "$before_jar"
  run_side after "run$i" "$after_jar"
done

# shellcheck disable=SC2046 # one argument per command name
/usr/bin/python3 "$here/shapes.py" compare "$work" $(commands | cut -d'|' -f1 | xargs -n1 | uniq) && rc=0 || rc=$?
echo "outputs in $work"
exit "$rc"
