#!/usr/bin/env bash
# predict against simulate near the saturation rate: llama-3.1-8b on an H100, random prompts of 1,024 tokens with 128
# output tokens, Poisson arrivals at 85%, 90% and 95% of the predicted saturation rate; the simulator runs 20,000
# requests of which the first 2,000 are warm-ups. Prints the README's table (mean and p99 TTFT, predicted / simulated).
#
#   bench/queueing/near-saturation.sh [INFERSIM_JAR]     (default: cli/target/infersim.jar, built by ./infersim)
set -euo pipefail
# shellcheck source=run.sh
source "$(dirname "${BASH_SOURCE[0]}")/run.sh"
work="$(mktemp -d /tmp/near-saturation.XXXXXX)"
workload=(--dataset-name random --random-input-len 1024 --random-output-len 128 --seed 0)
field() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

run "$jar" predict "${workload[@]}" --request-rate 1 --save-result --result-dir "$work" --result-filename probe.json >/dev/null
saturation="$(field "$work/probe.json" infersim_saturation_rate_per_s)"
printf 'saturation rate %.3f req/s predicted\n\n' "$saturation"
echo '| load | mean TTFT ms pred / sim | p99 TTFT ms pred / sim |'
echo '|---|---|---|'
for load in 0.85 0.90 0.95; do
  rate="$(/usr/bin/python3 -c "print(round($load * $saturation, 3))")"
  run "$jar" predict "${workload[@]}" --request-rate "$rate" --save-result --result-dir "$work" \
    --result-filename "predict-$load.json" >/dev/null 2>&1
  run "$jar" simulate "${workload[@]}" --request-rate "$rate" --num-prompts 20000 --num-warmups 2000 --save-result \
    --result-dir "$work" --result-filename "simulate-$load.json" >/dev/null 2>&1
  /usr/bin/python3 - "$work/predict-$load.json" "$work/simulate-$load.json" "$load" <<'PY'
import json, sys
p, s = (json.load(open(f)) for f in sys.argv[1:3])
def cell(key):
    err = 100 * (p[key] / s[key] - 1)
    note = f" ({err:+.0f}%)" if abs(err) >= 5 else ""
    return f"{p[key]:.1f} / {s[key]:.1f}{note}"
print(f"| {sys.argv[3]} | {cell('mean_ttft_ms')} | {cell('p99_ttft_ms')} |")
PY
done
rm -rf "$work"
