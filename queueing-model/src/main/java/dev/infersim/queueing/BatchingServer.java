package dev.infersim.queueing;

/**
 * One continuous-batching replica serving a workload, as the birth-death chain of
 * {@link ContinuousBatchingModel} sees it: at most {@code maxNumSeqs} requests run together,
 * each iteration gives every running request one output token, and a request needs L output
 * tokens with L geometric on {1, 2, ...} with mean {@code meanOutputTokens} (so each running
 * request finishes at any iteration with probability 1 / E[L], independently of its age).
 *
 * <p><b>Prefill.</b> With chunked prefill the prompts of newly admitted requests share iterations
 * with decoding. In steady state admissions equal completions, b / E[L] per iteration for batch
 * size b, so an iteration carries on average b P / E[L] prompt tokens (P = mean prompt tokens),
 * and the iteration time becomes tau(b) = alpha + betaDecode b + betaPrefill b P / E[L]: still
 * linear in b, which keeps the chain exact for geometric L. The duration of the iteration that
 * prefills a request's own prompt and emits its first token, {@code prefillIterationSeconds}, is
 * given by the caller; {@link ContinuousBatchingModel#meanTtftSeconds()} adds it to the waits.
 *
 * <p><b>KV-cache memory.</b> A request holds P + k tokens of KV cache during its k-th iteration,
 * so over its life it occupies E[sum_{k=1..L} (P + k)] = E[L] (P + E[L]) token-iterations
 * (using E[L^2] = 2 E[L]^2 - E[L] for geometric L): on average P + E[L] tokens per running request.
 * By Little's law on memory a cache of M tokens sustains at most M / (P + E[L]) running requests,
 * the memory-time stability limit of Nie, Si and Zhou (arXiv 2605.04595) for this workload;
 * {@link #limitedByKvCache(long)} caps the batch accordingly. It is an upper bound: the engine
 * preempts when the instantaneous occupancy, not its mean, exceeds the cache.
 *
 * @param maxNumSeqs B, the most requests in one batch (vLLM's --max-num-seqs)
 * @param meanPromptTokens P, mean prompt length
 * @param meanOutputTokens E[L], mean output length, at least 1
 * @param iterationTime the fitted iteration-time model
 * @param prefillIterationSeconds mean duration of the iteration that prefills a request's prompt and emits
 *     its first token (the waits before it are the model's)
 */
public record BatchingServer(int maxNumSeqs, double meanPromptTokens, double meanOutputTokens,
        IterationTime iterationTime, double prefillIterationSeconds) {

    public BatchingServer {
        Checks.positive("maxNumSeqs", maxNumSeqs);
        Checks.nonNegative("meanPromptTokens", meanPromptTokens);
        if (!(meanOutputTokens >= 1) || Double.isInfinite(meanOutputTokens)) {
            throw new IllegalArgumentException(
                    "meanOutputTokens must be finite and at least 1, got " + meanOutputTokens);
        }
        if (iterationTime == null) {
            throw new IllegalArgumentException("iterationTime must be given");
        }
        Checks.nonNegative("prefillIterationSeconds", prefillIterationSeconds);
    }

    /** tau(b) with the steady-state prefill load of b P / E[L] prompt tokens per iteration. */
    public double iterationSeconds(int batchSize) {
        return iterationTime.seconds(batchSize, batchSize * meanPromptTokens / meanOutputTokens);
    }

    /** tau(b) of an iteration that only decodes: no prompt tokens. */
    public double decodeIterationSeconds(int batchSize) {
        return iterationTime.seconds(batchSize, 0);
    }

    /** mu_n = min(n, B) / (E[L] tau(min(n, B))): the completion rate with n requests in the system. */
    public double departureRatePerS(int requestsInSystem) {
        int batch = Math.min(requestsInSystem, maxNumSeqs);
        return batch == 0 ? 0 : batch / (meanOutputTokens * iterationSeconds(batch));
    }

    /** lambda_max = B / (E[L] tau(B)): the arrival rate at which the queue grows without bound. */
    public double saturationRatePerS() {
        return departureRatePerS(maxNumSeqs);
    }

    /** Output tokens per second at saturation, lambda_max E[L]. */
    public double saturationOutputTokensPerS() {
        return saturationRatePerS() * meanOutputTokens;
    }

    /** min(B, floor(M / (P + E[L]))): the batch size a KV cache of M tokens sustains on average. */
    public int kvLimitedBatchSize(long kvCapacityTokens) {
        Checks.positive("kvCapacityTokens", kvCapacityTokens);
        double sustained = Math.floor(kvCapacityTokens / (meanPromptTokens + meanOutputTokens));
        if (sustained < 1) {
            throw new IllegalArgumentException("kvCapacityTokens " + kvCapacityTokens
                    + " cannot hold one request of mean footprint " + (meanPromptTokens + meanOutputTokens)
                    + " tokens");
        }
        return (int) Math.min(maxNumSeqs, sustained);
    }

    /** This server with its batch capped by the KV cache; its saturation rate is the memory bound. */
    public BatchingServer limitedByKvCache(long kvCapacityTokens) {
        return new BatchingServer(kvLimitedBatchSize(kvCapacityTokens), meanPromptTokens, meanOutputTokens,
                iterationTime, prefillIterationSeconds);
    }

    /** The stationary chain at Poisson arrival rate lambda; throws if lambda reaches saturation. */
    public ContinuousBatchingModel atArrivalRate(double arrivalRatePerS) {
        return new ContinuousBatchingModel(this, arrivalRatePerS);
    }
}
