# Sourced by validity.sh and side-by-side.sh, from the checkout's root: the one mock a benchmark measures against.
#
# start_mock PORT LOG [SERVE_ARG...]: refuses a PORT that already answers (another benchmark's mock would serve two
# benchmarks at once), starts `./infersim serve --port PORT SERVE_ARG...` in the background with its output in LOG,
# kills it when the script exits (SERVER is its pid), and waits up to 2 minutes for it to list its models.
start_mock() {
  local port=$1 log=$2
  shift 2
  local url=http://127.0.0.1:$port
  ! curl -s -o /dev/null "$url/" || { echo "port $port is taken (another benchmark?): pass PORT=..."; exit 1; }
  ./infersim serve --port "$port" "$@" > "$log" 2>&1 &
  SERVER=$!
  trap 'kill $SERVER 2>/dev/null || true' EXIT
  for _ in $(seq 240); do
    kill -0 $SERVER 2> /dev/null || break
    curl -sf "$url/v1/models" > /dev/null 2>&1 && break
    sleep 0.5
  done
  curl -sf "$url/v1/models" > /dev/null || { echo "mock did not start; see $log"; exit 1; }
}
