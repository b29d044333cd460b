#!/usr/bin/env bash
# Shows that a refactoring changed no result: runs a fixed set of deterministic commands (predict and simulate over the
# benchmark matrix rows and the queueing matrix's scenarios, predict --explain, simulate --save-result with
# --save-detailed under both timings, LoRA and prefill/decode disaggregation, check-harness on recorded harness runs) with two builds of infersim and compares every file they
# write, and their terminal output, byte for byte.
#
#   bench/refactor/same-results.sh BEFORE AFTER
#
# BEFORE and AFTER are each an infersim.jar or a checkout (whose cli/target/infersim.jar is built when missing).
# The one wall-clock value in the results, vLLM's "date" key, is set to a fixed string before comparing; nothing else
# is changed. Exits 0 when every command's output is identical, 1 otherwise (and prints the first lines of each diff).
# WORK (default: a new temporary directory) keeps the outputs: WORK/before/NAME and WORK/after/NAME.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BEFORE AFTER (each an infersim.jar or a checkout)" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fixtures="$here/../../benchmark-client/src/test/resources/harness"

# shellcheck source=jar.sh
source "$here/jar.sh"
before_jar="$(jar_of "$1")"
after_jar="$(jar_of "$2")"
work="${WORK:-$(mktemp -d /tmp/same-results.XXXXXX)}"

# name | arguments. Result files are written into the command's own directory (the working directory of the run).
commands() {
  local r
  for r in a b c d e f; do
    echo "simulate-matrix-row-$r | simulate --workload matrix-row-$r --save-result --result-filename result.json"
    echo "predict-matrix-row-$r | predict --workload matrix-row-$r --save-result --result-filename result.json"
  done
  # row D is a closed loop of 8 users: predict refuses the profile's unlimited rate alone, and answers with the loop
  echo "predict-matrix-row-d-loop | predict --workload matrix-row-d --request-rate inf --max-concurrency 8 --save-result --result-filename result.json"
  local random="--dataset-name random --seed 42 --num-prompts 4000"
  cat <<EOF
predict-md1 | predict $random --random-input-len 256 --random-output-len 8 --max-num-seqs 1 --max-num-batched-tokens 2048 --no-enable-prefix-caching --request-rate 12 --explain --save-result --result-filename result.json
predict-mg1-bursty | predict $random --random-input-len 256 --random-output-len 64 --random-range-ratio 0.5 --eos-mean-tokens 16 --max-num-seqs 1 --max-num-batched-tokens 2048 --no-enable-prefix-caching --request-rate 5 --burstiness 0.25 --explain --save-result --result-filename result.json
predict-batching | predict $random --random-input-len 512 --random-output-len 512 --random-range-ratio 0.5 --eos-mean-tokens 128 --request-rate 36 --explain --slo-ttft-ms 200 --dollars-per-gpu-hour 2.5 --save-result --result-filename result.json
predict-batching-bursty | predict $random --random-input-len 512 --random-output-len 512 --random-range-ratio 0.5 --eos-mean-tokens 128 --request-rate 41 --burstiness 0.25 --explain --save-result --result-filename result.json
predict-batching-smooth | predict $random --random-input-len 512 --random-output-len 512 --random-range-ratio 0.5 --eos-mean-tokens 128 --request-rate 41 --burstiness 4 --save-result --result-filename result.json
predict-prefix-caching | predict --dataset-name prefix_repetition --prefix-repetition-prefix-len 1024 --prefix-repetition-suffix-len 128 --prefix-repetition-num-prefixes 10 --prefix-repetition-output-len 128 --seed 42 --num-prompts 4000 --request-rate 20 --explain --save-result --result-filename result.json
predict-kv-pressure | predict $random --random-input-len 512 --random-output-len 512 --gpu-memory-utilization 0.25 --request-rate 4 --explain --save-result --result-filename result.json
predict-kv-geometric | predict $random --random-input-len 512 --random-output-len 512 --random-range-ratio 0.5 --eos-mean-tokens 128 --gpu-memory-utilization 0.25 --request-rate 17 --save-result --result-filename result.json
predict-chunked-512 | predict $random --random-input-len 2048 --random-output-len 256 --random-range-ratio 0.5 --eos-mean-tokens 96 --max-num-batched-tokens 512 --request-rate 9 --explain --save-result --result-filename result.json
predict-unchunked | predict $random --random-input-len 2048 --random-output-len 256 --random-range-ratio 0.5 --eos-mean-tokens 96 --no-enable-chunked-prefill --max-model-len 8192 --request-rate 10 --save-result --result-filename result.json
predict-h200 | predict $random --random-input-len 512 --random-output-len 512 --random-range-ratio 0.5 --eos-mean-tokens 128 --gpu h200 --request-rate 40 --save-result --result-filename result.json
predict-mixtral-tp2 | predict $random --random-input-len 512 --random-output-len 512 --random-range-ratio 0.5 --eos-mean-tokens 128 --model mixtral-8x7b --tensor-parallel-size 2 --request-rate 28 --save-result --result-filename result.json
predict-qwen | predict $random --random-input-len 1024 --random-output-len 256 --random-range-ratio 0.5 --eos-mean-tokens 64 --model qwen2.5-7b --request-rate 25 --save-result --result-filename result.json
predict-near-saturation | predict $random --random-input-len 1024 --random-output-len 128 --request-rate 24.5 --save-result --result-filename result.json
predict-unstable | predict $random --random-input-len 1024 --random-output-len 128 --request-rate 40 --save-result --result-filename result.json
predict-closed-loop | predict $random --random-input-len 1024 --random-output-len 128 --random-range-ratio 0.5 --request-rate inf --max-concurrency 64 --save-result --result-filename result.json
predict-closed-loop-kv | predict $random --random-input-len 8192 --random-output-len 1024 --random-range-ratio 0.5 --request-rate inf --max-concurrency 48 --save-result --result-filename result.json
predict-fixed-timing | predict $random --random-input-len 512 --random-output-len 128 --timing fixed --time-to-first-token 20 --inter-token-latency 5 --max-num-seqs 32 --request-rate 40 --save-result --result-filename result.json
predict-chat | predict --workload chat --request-rate 8 --explain --save-result --result-filename result.json
simulate-batching | simulate $random --random-input-len 512 --random-output-len 512 --random-range-ratio 0.5 --eos-mean-tokens 128 --request-rate 36 --num-warmups 400 --save-result --save-detailed --result-filename result.json
simulate-prefix-caching | simulate --dataset-name prefix_repetition --prefix-repetition-prefix-len 1024 --prefix-repetition-suffix-len 128 --prefix-repetition-num-prefixes 10 --prefix-repetition-output-len 128 --seed 42 --num-prompts 4000 --request-rate 20 --save-result --save-detailed --result-filename result.json
simulate-kv-pressure | simulate $random --random-input-len 512 --random-output-len 512 --gpu-memory-utilization 0.25 --request-rate 4 --save-result --result-filename result.json
simulate-chunked-512 | simulate $random --random-input-len 2048 --random-output-len 256 --random-range-ratio 0.5 --eos-mean-tokens 96 --max-num-batched-tokens 512 --request-rate 9 --save-result --result-filename result.json
simulate-md1 | simulate $random --random-input-len 256 --random-output-len 8 --max-num-seqs 1 --max-num-batched-tokens 2048 --no-enable-prefix-caching --request-rate 12 --save-result --result-filename result.json
simulate-closed-loop | simulate $random --random-input-len 1024 --random-output-len 128 --random-range-ratio 0.5 --request-rate inf --max-concurrency 64 --save-result --result-filename result.json
simulate-fixed-timing | simulate $random --random-input-len 512 --random-output-len 128 --timing fixed --time-to-first-token 20 --inter-token-latency 5 --max-num-seqs 32 --request-rate 40 --save-result --save-detailed --result-filename result.json
simulate-fixed-kv-pressure | simulate $random --random-input-len 512 --random-output-len 512 --timing fixed --time-to-first-token 20 --time-to-first-token-std-dev 5 --inter-token-latency 5 --inter-token-latency-std-dev 1 --prefill-time-per-token 0.05 --time-factor-under-load 2 --gpu-memory-utilization 0.25 --max-num-seqs 128 --request-rate 30 --save-result --save-detailed --result-filename result.json
simulate-fixed-lora | simulate --workload lora-tenants --dataset-name workload --replicas 2 --enable-lora --max-loras 2 --max-cpu-loras 4 --max-num-seqs 64 --seed 11 --timing fixed --time-to-first-token 30 --inter-token-latency 8 --save-result --result-filename result.json
simulate-kv-pressure-prio | simulate $random --random-input-len 512 --random-output-len 512 --gpu-memory-utilization 0.25 --request-rate 4 --scheduling-policy priority --save-result --result-filename result.json
simulate-unchunked | simulate $random --random-input-len 2048 --random-output-len 256 --random-range-ratio 0.5 --eos-mean-tokens 96 --no-enable-chunked-prefill --max-model-len 8192 --request-rate 10 --save-result --result-filename result.json
simulate-lora | simulate --workload lora-tenants --dataset-name workload --replicas 4 --router lora-affinity --enable-lora --max-loras 2 --max-cpu-loras 4 --max-num-seqs 64 --seed 11 --save-result --save-detailed --result-filename result.json
simulate-pd | simulate --dataset-name random --seed 42 --num-prompts 1200 --random-input-len 4000 --random-output-len 200 --request-rate 12 --prefill-replicas 2 --decode-replicas 2 --decode-router least-outstanding-requests --save-result --save-detailed --result-filename result.json
simulate-plan-disaggregation | simulate --dataset-name random --seed 42 --num-prompts 600 --random-input-len 4000 --random-output-len 200 --request-rate 6 --replicas 4 --plan-disaggregation --goodput ttft:400 tpot:15 --dollars-per-gpu-hour 2.5 --save-result --result-filename result.json
simulate-fleet | simulate $random --random-input-len 512 --random-output-len 128 --request-rate 60 --replicas 3 --router least-outstanding-requests --save-result --result-filename result.json
simulate-chat | simulate --workload chat --num-prompts 2000 --save-result --save-detailed --result-filename result.json
check-harness-vllm | check-harness --format vllm $fixtures/vllm-0.6.1-poisson-20/result.json.gz --truth $fixtures/vllm-0.6.1-poisson-20/truth.jsonl.gz --json report.json
check-harness-guidellm | check-harness --format guidellm $fixtures/guidellm-0.7.3-poisson-10/result.json.gz --truth $fixtures/guidellm-0.7.3-poisson-10/truth.jsonl.gz --json report.json
check-harness-aiperf | check-harness --format aiperf $fixtures/aiperf-poisson-10/profile_export.jsonl.gz --truth $fixtures/aiperf-poisson-10/truth.jsonl.gz --json report.json
check-harness-infersim | check-harness --format vllm $fixtures/infersim-bench-poisson-20/bench.json.gz --truth $fixtures/infersim-bench-poisson-20/truth.jsonl.gz --json report.json
EOF
}

run_all() {
  local side="$1" jar="$2" name args rc
  while IFS='|' read -r name args; do
    name="$(echo "$name" | xargs)"
    mkdir -p "$work/$side/$name"
    # shellcheck disable=SC2086 # the arguments are words
    rc=0
    (cd "$work/$side/$name" && exec java -Xmx1g -jar "$jar" $args >stdout.txt 2>stderr.txt) || rc=$?
    echo "$rc" >"$work/$side/$name/exit-code.txt"
    # vLLM's "date" (in the result and on predict's terminal table) is the wall clock's; all else must match as written.
    find "$work/$side/$name" -name '*.json' -exec sed -i -E 's/"date" ?: ?"[0-9]{8}-[0-9]{6}"/"date":"(fixed)"/' {} +
    sed -i -E 's/^date( +)[0-9]{8}-[0-9]{6}$/date\1(fixed)/' "$work/$side/$name/stdout.txt"
  done < <(commands)
}

echo "before: $before_jar" >&2
run_all before "$before_jar"
echo "after:  $after_jar" >&2
run_all after "$after_jar"

same=0
differ=0
while IFS='|' read -r name _; do
  name="$(echo "$name" | xargs)"
  files="$(cd "$work/before/$name" && find . -type f | sort | tr '\n' ' ')"
  if diff -r "$work/before/$name" "$work/after/$name" >"$work/$name.diff" 2>&1; then
    printf 'same    %-28s exit %s, %s\n' "$name" "$(cat "$work/before/$name/exit-code.txt")" "$files"
    same=$((same + 1))
  else
    printf 'DIFFERS %-28s (%s)\n' "$name" "$work/$name.diff"
    head -20 "$work/$name.diff" | sed 's/^/    /'
    differ=$((differ + 1))
  fi
done < <(commands)
echo "$same commands identical, $differ differ; outputs in $work"
[[ $differ -eq 0 ]]
