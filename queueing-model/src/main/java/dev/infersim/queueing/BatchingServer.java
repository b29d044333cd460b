package dev.infersim.queueing;

/**
 * One continuous-batching replica serving a workload, as the birth-death chain of
 * {@link ContinuousBatchingModel} sees it: at most {@code maxNumSeqs} requests run together,
 * each iteration gives every running request one output token, and a request needs L output
 * tokens (so with n running, requests complete at rate n / (E[L] tau(n))).
 *
 * <p><b>Prefill.</b> The prompts of newly admitted requests share iterations with decoding. In
 * steady state admissions equal completions, n / E[L] per iteration, so the mean iteration
 * {@link IterationTimes#meanSeconds(int)} carries that share of prefill work; the iteration that
 * prefills a request's own prompt and emits its first token is {@link IterationTimes#prefillSeconds(int)}.
 *
 * <p><b>Limits.</b> {@code maxNumSeqs} is the batch the engine can hold: vLLM's --max-num-seqs,
 * or fewer when the KV cache holds fewer sequences (the caller decides; see {@link #withMaxNumSeqs(int)}).
 *
 * @param maxNumSeqs B, the most requests in one batch
 * @param outputTokens the distribution of L, at least 1
 * @param iterationTimes the iteration durations for n = 0..B
 */
public record BatchingServer(int maxNumSeqs, DiscreteDistribution outputTokens, IterationTimes iterationTimes) {

    public BatchingServer {
        Checks.positive("maxNumSeqs", maxNumSeqs);
        if (outputTokens == null || iterationTimes == null) {
            throw new IllegalArgumentException("outputTokens and iterationTimes must be given");
        }
        if (!(outputTokens.value(0) >= 1)) {
            throw new IllegalArgumentException("output lengths must be at least 1 token, got " + outputTokens.value(0));
        }
    }

    /**
     * A server with the linear iteration time tau, its prompts of mean P costed as {@link IterationTime#forWorkload}
     * says, and outputs of mean E[L] (the chain sees only the mean).
     */
    public static BatchingServer linear(int maxNumSeqs, double meanPromptTokens, double meanOutputTokens,
            IterationTime tau) {
        if (!(meanOutputTokens >= 1) || Double.isInfinite(meanOutputTokens)) {
            throw new IllegalArgumentException("meanOutputTokens must be finite and at least 1, got " + meanOutputTokens);
        }
        return new BatchingServer(maxNumSeqs, DiscreteDistribution.constant(meanOutputTokens),
                tau.forWorkload(meanPromptTokens, meanOutputTokens));
    }

    public double meanOutputTokens() {
        return outputTokens.mean();
    }

    /** The mean iteration with n running, prefill share included. */
    public double iterationSeconds(int batchSize) {
        return iterationTimes.meanSeconds(batchSize);
    }

    /** An iteration that only decodes. */
    public double decodeIterationSeconds(int batchSize) {
        return iterationTimes.decodeSeconds(batchSize);
    }

    /** mu_n = min(n, B) / (E[L] tau(min(n, B))): the completion rate with n requests in the system. */
    public double departureRatePerS(int requestsInSystem) {
        int batch = Math.min(requestsInSystem, maxNumSeqs);
        return batch == 0 ? 0 : batch / (meanOutputTokens() * iterationSeconds(batch));
    }

    /** lambda_max = B / (E[L] tau(B)): the arrival rate at which the queue grows without bound. */
    public double saturationRatePerS() {
        return departureRatePerS(maxNumSeqs);
    }

    /** Output tokens per second at saturation, lambda_max E[L]. */
    public double saturationOutputTokensPerS() {
        return saturationRatePerS() * meanOutputTokens();
    }

    /** This server with a smaller batch limit, such as the sequences a KV cache holds. */
    public BatchingServer withMaxNumSeqs(int batchLimit) {
        Checks.positive("batchLimit", batchLimit);
        return new BatchingServer(Math.min(maxNumSeqs, batchLimit), outputTokens, iterationTimes);
    }
}
