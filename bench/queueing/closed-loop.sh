#!/usr/bin/env bash
# predict against simulate for closed loops as a user runs them: vLLM's CI shape (random 512/256 prompts and outputs,
# --ignore-eos, --request-rate inf --max-concurrency N), fixed lengths (the lock step) and +-50% (--random-range-ratio
# 0.5: a cohort that dissolves), llama-3.1-8b on an H100, 16N requests (at least 1,000), no warm-ups (vLLM's default:
# the start-up burst is in both). Prints the README's table: mean TTFT, mean TPOT and throughput, predicted / simulated,
# and the regime predict names.
#
#   bench/queueing/closed-loop.sh [INFERSIM_JAR]     (default: cli/target/infersim.jar, built by ./infersim)
set -euo pipefail
# shellcheck source=run.sh
source "$(dirname "${BASH_SOURCE[0]}")/run.sh"
work="$(mktemp -d /tmp/closed-loop.XXXXXX)"
trap 'rm -rf "$work"' EXIT

echo '| lengths | N | regime | mean TTFT ms pred / sim | mean TPOT ms pred / sim | throughput req/s pred / sim |'
echo '|---|---|---|---|---|---|'
for range in 0 0.5; do
  for n in 1 8 64 256; do
    prompts=$(( 16 * n > 1000 ? 16 * n : 1000 ))
    args=(--dataset-name random --random-input-len 512 --random-output-len 256 --random-range-ratio "$range" --ignore-eos
      --request-rate inf --max-concurrency "$n" --num-prompts "$prompts" --seed 0 --save-result --result-dir "$work")
    run "$jar" predict "${args[@]}" --result-filename "predict.json" >/dev/null 2>&1
    run "$jar" simulate "${args[@]}" --result-filename "simulate.json" >/dev/null 2>&1
    /usr/bin/python3 - "$work/predict.json" "$work/simulate.json" "$range" "$n" <<'PY'
import json, sys
p, s = (json.load(open(f)) for f in sys.argv[1:3])
def cell(key):
    return f"{p[key]:.2f} / {s[key]:.2f} ({100 * (p[key] / s[key] - 1):+.1f}%)"
lengths = "fixed" if float(sys.argv[3]) == 0 else f"+-{100 * float(sys.argv[3]):.0f}%"
regime = p["infersim_closed_loop_regime"]
if regime == "lock_step":
    regime += f", {p['infersim_lock_step_groups']} group(s)"
else:
    regime += f", dissolves by round {p['infersim_cohort_dissolves_at_round']:.1f}"
print(f"| {lengths} | {sys.argv[4]} | {regime} | {cell('mean_ttft_ms')} | {cell('mean_tpot_ms')} | {cell('request_throughput')} |")
PY
  done
done
