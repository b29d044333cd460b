package dev.infersim.queueing;

/**
 * How long a continuous-batching iteration takes with n sequences decoding, as the chain of
 * {@link ContinuousBatchingModel} needs it. The caller derives the values from an engine's cost model; this package
 * only uses them. All methods take n in 0..the batch limit.
 */
public interface IterationTimes {

    /** An iteration in which n sequences decode one token each and nothing is prefilled. */
    double decodeSeconds(int n);

    /**
     * The mean iteration while n sequences run, with the prompts admitted to replace finishing requests prefilled in
     * it: its decode time plus its share of the prefill work. The chain's completion rate is n / (E[L] meanSeconds(n)).
     */
    double meanSeconds(int n);

    /**
     * The time to prefill k >= 1 prompts admitted together while n others decode: one iteration, or with chunked
     * prefill the iterations the token budget spreads them over. Convex in k where the engine turns compute-bound.
     */
    double prefillSeconds(int n, int prompts);

    /**
     * The iterations {@link #prefillSeconds} spans, each of which gives the n decoding sequences a token: 1, or with
     * chunked prefill (or prompts past the token budget) more.
     */
    double prefillIterations(int n, int prompts);

    /**
     * When the prompt at {@code position} (0 first) of k prompts admitted together gets its first token: the whole
     * prefill where they share one iteration; sooner for the first ones where chunked prefill takes them in turn.
     */
    default double firstTokenSeconds(int n, int prompts, int position) {
        return prefillSeconds(n, prompts);
    }
}
