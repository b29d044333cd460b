# Sourced by the scripts of this directory: `run JAR COMMAND ARG...` runs infersim from JAR when one was given as the
# script's first argument, else through the checkout's ./infersim (which builds cli/target/infersim.jar when stale).
# Sets `jar` to that argument ("" for none) and `root` to the checkout.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
jar="${1:-}"
if [[ -n "$jar" ]]; then
  run() { java -jar "$1" "${@:2}"; }
else
  run() { "$root/infersim" "${@:2}"; }
fi
