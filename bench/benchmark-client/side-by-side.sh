#!/usr/bin/env bash
# infersim bench beside vLLM's benchmark_serving.py (v0.6.1) on one machine, against one mock: the same workload
# (random dataset, 128 tokens in, 32 out, Poisson arrivals), run after run in turn (vLLM, then each launcher), so the
# machine's state hits all alike. Per run: the rate each client delivered, its TTFT p50/p99, and the mock's own TTFT
# p99 over the same requests (its truth log), which neither client can see; for infersim also its TTFT error against
# that truth and its verdict.
#
# Usage: VLLM_BENCHMARKS=DIR bench/benchmark-client/side-by-side.sh [LAUNCHER...]   (default launcher: ./infersim)
#   DIR holds vLLM v0.6.1's benchmarks/benchmark_serving.py and backend_request_func.py, e.g. from
#   git clone --depth 1 --branch v0.6.1 https://github.com/vllm-project/vllm (only those two files are run).
# They run on Debian's python3-aiohttp, python3-numpy and python3-tqdm; transformers and huggingface_hub are replaced
# by stand-ins this script writes under OUT: a tokenizer of one word per token over the words the mock itself emits
# (each one cl100k token, the mock's tokenizer), so that vLLM's random prompts are 128 tokens at the mock too.
# Settings: RATES ("50 200 500"), RUNS (3), REQUESTS (4000 a run), TIME_SCALE (10), PREWARM (20000 short requests that
# warm the mock's JIT first), PORT (18125), OUT (results directory), LOCK (a command prefix for each measured run, e.g.
# "flock -x /var/lock/bench", so that other work on the machine can wait for it).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${VLLM_BENCHMARKS:?set VLLM_BENCHMARKS to the benchmarks/ directory of vLLM v0.6.1}"
RATES=${RATES:-50 200 500}
RUNS=${RUNS:-3}
REQUESTS=${REQUESTS:-4000}
TIME_SCALE=${TIME_SCALE:-10}
PREWARM=${PREWARM:-20000}
PORT=${PORT:-18125}
OUT=$(realpath -m "${OUT:-bench/benchmark-client/results/side-by-side-$(date -u +%Y%m%dT%H%M%S)}")
LOCK=${LOCK:-}
LAUNCHERS=("$@")
[ ${#LAUNCHERS[@]} -gt 0 ] || LAUNCHERS=(./infersim)
URL=http://127.0.0.1:$PORT
PYTHON=/usr/bin/python3
mkdir -p "$OUT"

# shellcheck source=mock.sh
source bench/benchmark-client/mock.sh
# The mock as `serve` starts by default; no prefix cache, because vLLM's random prompts repeat (they are runs of
# consecutive token ids) and a cache would shorten vLLM's TTFTs only.
start_mock "$PORT" "$OUT/server.log" --time-scale "$TIME_SCALE" --no-enable-prefix-caching \
  --truth-log "$OUT/truth.jsonl"
prewarm_mock "$PORT" "$PREWARM" "$OUT/prewarm.txt"

# The stand-ins for the two Hugging Face packages benchmark_serving.py imports.
mkdir -p "$OUT/standin/transformers" "$OUT/standin/huggingface_hub"
curl -sf "$URL/v1/completions" -H 'content-type: application/json' \
  -d '{"model": "llama-3.1-8b", "prompt": "words", "max_tokens": 2000}' |
  "$PYTHON" -c 'import json, sys; print(" ".join(sorted({w.strip(".,") for w in json.load(sys.stdin)["choices"][0]["text"].split()})))' \
  > "$OUT/standin/words.txt"
cat > "$OUT/standin/transformers/__init__.py" << 'EOF'
"""Stand-in for transformers' tokenizers: one token per word, over the words in words.txt beside this package."""
import os

_WORDS = open(os.path.join(os.path.dirname(__file__), "..", "words.txt")).read().split()
_IDS = {w: i for i, w in enumerate(_WORDS)}


class PreTrainedTokenizerBase:
    vocab_size = len(_WORDS)

    def __call__(self, text, **kwargs):
        return type("Encoding", (), {"input_ids": [_IDS.get(w.strip(".,"), 0) for w in text.split()]})()

    def decode(self, ids, **kwargs):
        return " ".join(_WORDS[i] for i in ids)


PreTrainedTokenizer = PreTrainedTokenizerFast = PreTrainedTokenizerBase


class AutoTokenizer:
    @staticmethod
    def from_pretrained(name, **kwargs):
        return PreTrainedTokenizerBase()
EOF
touch "$OUT/standin/huggingface_hub/__init__.py"
echo "HF_HUB_OFFLINE = True" > "$OUT/standin/huggingface_hub/constants.py"

seed=0
for rate in $RATES; do
  for run in $(seq "$RUNS"); do
    clients=(vllm "${LAUNCHERS[@]}")
    for i in "${!clients[@]}"; do
      seed=$((seed + 1))
      name="c$i-r$rate-$run"
      cut -d' ' -f1 /proc/loadavg > "$OUT/$name.load"
      date +%s%3N > "$OUT/$name.start"
      if [ "$i" -eq 0 ]; then
        (cd "$VLLM_BENCHMARKS" && PYTHONPATH="$OUT/standin" $LOCK "$PYTHON" benchmark_serving.py --backend openai \
          --base-url "$URL" --endpoint /v1/completions --model llama-3.1-8b --dataset-name random \
          --random-input-len 128 --random-output-len 32 --num-prompts "$REQUESTS" --request-rate "$rate" \
          --seed "$seed" --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,99 --disable-tqdm \
          --save-result --result-dir "$OUT" --result-filename "$name.json") > "$OUT/$name.txt" 2>&1 || true
      else
        $LOCK "${clients[$i]}" bench --base-url "$URL" --model llama-3.1-8b --request-rate "$rate" \
          --num-prompts "$REQUESTS" --random-input-len 128 --random-output-len 32 --ignore-eos --validate \
          --seed "$seed" --save-result --result-dir "$OUT" --result-filename "$name.json" > "$OUT/$name.txt" 2>&1 || true
      fi
      date +%s%3N > "$OUT/$name.end"
      [ -f "$OUT/$name.json" ] || { echo "run $name wrote no result; see $OUT/$name.txt"; exit 1; }
    done
  done
done
sleep 2 # the truth log's writer flushes when its queue is empty

# One row per run, then per client and rate the median and worst TTFT p99 over the runs.
"$PYTHON" - "$OUT" "$RATES" "$RUNS" vllm "${LAUNCHERS[@]}" << 'EOF' | tee "$OUT/table.md"
import json, sys
import numpy as np

out, rates, runs, clients = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), sys.argv[4:]
truth = [json.loads(line) for line in open(f"{out}/truth.jsonl") if line.strip()]
arrival = np.array([r["wall"]["arrival_ms"] for r in truth])
server_ttft = np.array([r["wall"]["first_token_ms"] - r["wall"]["arrival_ms"] for r in truth])
rows, summary = [], {}
print("| client | rate | run | load 1m | delivered req/s | TTFT p50 (ms) | TTFT p99 (ms) | mock's TTFT p99 (ms) "
      "| infersim TTFT error p99 (ms) | infersim verdict |")
print("|---|---|---|---|---|---|---|---|---|---|")
for rate in rates:
    for run in range(1, runs + 1):
        for i, client in enumerate(clients):
            name = f"c{i}-r{rate}-{run}"
            r = json.load(open(f"{out}/{name}.json"))
            start, end = (int(open(f"{out}/{name}.{k}").read()) for k in ("start", "end"))
            inside = (arrival >= start) & (arrival <= end)
            # the measured requests only: vLLM's initial test request and infersim's warm-up arrive first
            window = server_ttft[inside][np.argsort(arrival[inside], kind="stable")][-r["completed"]:]
            truth_p99 = np.percentile(window, 99)
            error = r.get("infersim_ground_truth", {}).get("ttft_abs_error_ms", {}).get("p99")
            verdict = "" if i == 0 else ("valid" if r["infersim_valid"] else "invalid: " + "; ".join(
                r["infersim_invalid_reasons"])[:60] + "...")
            load = open(f"{out}/{name}.load").read().strip()
            print(f"| {client} | {rate} | {run} | {load} | {r['request_throughput']:.1f} | {r['median_ttft_ms']:.2f} "
                  f"| {r['p99_ttft_ms']:.2f} | {truth_p99:.2f} | {'' if error is None else f'{error:.2f}'} | {verdict} |")
            summary.setdefault((client, rate), []).append((r["request_throughput"], r["p99_ttft_ms"], truth_p99, error))
print()
print("| client | rate | runs | delivered req/s (median) | TTFT p99 (median / worst run, ms) | mock's TTFT p99 (median, ms) "
      "| infersim TTFT error p99 (median / worst, ms) |")
print("|---|---|---|---|---|---|---|")
for (client, rate), v in summary.items():
    a = np.array([[x if x is not None else np.nan for x in row] for row in v])
    err = "" if np.isnan(a[:, 3]).all() else f"{np.median(a[:, 3]):.2f} / {np.max(a[:, 3]):.2f}"
    print(f"| {client} | {rate} | {len(v)} | {np.median(a[:, 0]):.1f} | {np.median(a[:, 1]):.2f} / {np.max(a[:, 1]):.2f} "
          f"| {np.median(a[:, 2]):.2f} | {err} |")
EOF
echo "results in $OUT (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
