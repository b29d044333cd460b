package dev.infersim.engine;

/**
 * What a completed iteration produced: one output token for each request that sampled, and the requests that finished.
 * Owned and reused by its {@link EngineCore}: valid until the next {@code completeStep}.
 */
public final class StepOutcome {
    private final EngineRequest[] tokens;
    private int tokenCount;
    private final EngineRequest[] finished;
    private int finishedCount;
    long endNanos;

    StepOutcome(int maxNumSeqs) {
        tokens = new EngineRequest[maxNumSeqs];
        finished = new EngineRequest[maxNumSeqs];
    }

    void reset(long endNanos) {
        this.endNanos = endNanos;
        tokenCount = 0;
        finishedCount = 0;
    }

    void addToken(EngineRequest r) {
        tokens[tokenCount++] = r;
    }

    void addFinished(EngineRequest r) {
        finished[finishedCount++] = r;
    }

    /**
     * Entries of requests that got a new output token this step, one per token: a request appears once, or in a
     * multi-step round ({@link StepPlan#gpuSteps}) up to once per pass, every token of the round released at its end.
     */
    public int tokenCount() { return tokenCount; }
    public EngineRequest tokenRequest(int i) { return tokens[i]; }
    /** Requests that finished this step (after their last token), with {@link EngineRequest#finishReason()} set. */
    public int finishedCount() { return finishedCount; }
    public EngineRequest finished(int i) { return finished[i]; }
    /** When the step ended: the timestamp of every token in it. */
    public long endNanos() { return endNanos; }
}
