# Sourced by validity.sh, side-by-side.sh and precision.sh, from the checkout's root: the one mock a benchmark measures
# against.
#
# start_mock PORT LOG [SERVE_ARG...]: refuses a PORT that already answers, starts `./infersim serve --port PORT
# SERVE_ARG...` (INFERSIM, when set, in place of ./infersim) in the background with its output in LOG (INFERSIM_JAVA_OPTS,
# when set, sets its JVM's), kills it when the script exits (SERVER is its pid), and waits up to START_WAIT_S seconds
# (default 120) for it to list its models. Only this run's own
# mock will do: another one on PORT would serve two benchmarks at once.
start_mock() {
  local port=$1 log=$2
  shift 2
  local url=http://127.0.0.1:$port
  ! curl -s -o /dev/null "$url/" || { echo "port $port is taken (another benchmark?): pass PORT=..."; exit 1; }
  ${INFERSIM:-./infersim} serve --port "$port" "$@" > "$log" 2>&1 &
  SERVER=$!
  trap 'kill $SERVER 2>/dev/null || true' EXIT
  for _ in $(seq $(( ${START_WAIT_S:-120} * 2 ))); do
    kill -0 $SERVER 2> /dev/null || break
    curl -sf "$url/v1/models" > /dev/null 2>&1 && break
    sleep 0.5
  done
  kill -0 $SERVER 2> /dev/null && curl -sf "$url/v1/models" > /dev/null ||
    { echo "mock did not start (is PORT $port taken?); see $log"; exit 1; }
}

# prewarm_mock PORT REQUESTS LOG: REQUESTS short requests as fast as 64 streams take them, so that the mock's JIT has
# compiled its hot paths before anything is measured (none for 0); the client's output in LOG.
prewarm_mock() {
  if [ "$2" -gt 0 ]; then
    ./infersim bench --base-url "http://127.0.0.1:$1" --model llama-3.1-8b --ignore-eos --request-rate inf \
      --max-concurrency 64 --num-prompts "$2" --random-input-len 64 --random-output-len 4 --seed 999999 \
      > "$3" 2>&1 || true
  fi
}
