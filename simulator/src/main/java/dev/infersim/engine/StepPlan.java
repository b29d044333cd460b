package dev.infersim.engine;

/**
 * What one iteration runs and how long it takes: the scheduled requests with their new-token counts, the requests
 * preempted and the requests admitted for the first time while planning it. Owned and reused by its {@link EngineCore}:
 * valid until the next {@code planStep}.
 */
public final class StepPlan {
    final EngineRequest[] requests;
    final int[] newTokens;
    int size;
    /** The planned requests' new tokens, summed: what the step takes of a token budget. */
    long scheduledTokens;
    private EngineRequest[] preempted = new EngineRequest[8];
    private int preemptedCount;
    private EngineRequest[] admitted = new EngineRequest[8];
    private int admittedCount;
    final BatchShape shape = new BatchShape();
    /** The step's LoRA adapters (vLLM's {@code scheduled_loras}), for its timing to load and price. */
    final StepLoras loras;
    /**
     * Forward passes the plan runs: 1, or a multi-step decode round's {@code --num-scheduler-steps}, each pass one
     * more token for every planned request (vLLM V0's lookahead slots, {@link MultiStepScheduler}).
     */
    int gpuSteps = 1;
    long startNanos;
    long durationNanos;
    long loraLoadNanos;

    StepPlan(int maxNumSeqs, StepLoras loras) {
        this.loras = loras;
        requests = new EngineRequest[maxNumSeqs];
        newTokens = new int[maxNumSeqs];
    }

    void reset(long nowNanos) {
        size = 0;
        scheduledTokens = 0;
        preemptedCount = 0;
        admittedCount = 0;
        shape.clear();
        gpuSteps = 1;
        startNanos = nowNanos;
        durationNanos = 0;
        loraLoadNanos = 0;
    }

    void add(EngineRequest r, int tokens) {
        requests[size] = r;
        newTokens[size++] = tokens;
        scheduledTokens += tokens;
    }

    /** Drops every planned request, keeping the admissions and preemptions recorded so far. */
    void clearRequests() {
        java.util.Arrays.fill(requests, 0, size, null);
        size = 0;
        scheduledTokens = 0;
    }

    /**
     * Drops a request planned earlier in this step (it was preempted later in the same planning pass), giving its tokens
     * back; false when it was not planned.
     */
    boolean removeIfPresent(EngineRequest r) {
        for (int i = 0; i < size; i++) {
            if (requests[i] == r) {
                scheduledTokens -= newTokens[i];
                System.arraycopy(requests, i + 1, requests, i, size - i - 1);
                System.arraycopy(newTokens, i + 1, newTokens, i, size - i - 1);
                requests[--size] = null;
                return true;
            }
        }
        return false;
    }

    /** Describes the planned batch in {@link #shape()}: each request a decode or a prefill chunk, and its LoRA tokens. */
    void describeShape() {
        for (int i = 0; i < size; i++) {
            EngineRequest r = requests[i];
            int n = newTokens[i];
            if (r.computedTokens >= r.promptTokens() && n == 1 && r.outputTokens > 0) {
                shape.addDecode(r.computedTokens);
            } else {
                shape.addPrefill(n, r.computedTokens, r.computedTokens + n >= r.totalTokens());
            }
            if (r.lora() != null) {
                shape.addLoraTokens(n);
            }
        }
        shape.addNewRequests(admittedCount);
    }

    void recordPreempted(EngineRequest r) {
        if (preemptedCount == preempted.length) {
            preempted = java.util.Arrays.copyOf(preempted, preemptedCount * 2);
        }
        preempted[preemptedCount++] = r;
    }

    void recordAdmitted(EngineRequest r) {
        if (admittedCount == admitted.length) {
            admitted = java.util.Arrays.copyOf(admitted, admittedCount * 2);
        }
        admitted[admittedCount++] = r;
    }

    /** Requests in this iteration. */
    public int size() { return size; }
    public EngineRequest request(int i) { return requests[i]; }
    /**
     * Tokens request {@code i} computes in each forward pass of this step: 1 for decode, the chunk length for prefill.
     */
    public int newTokens(int i) { return newTokens[i]; }
    public int preemptedCount() { return preemptedCount; }
    public EngineRequest preempted(int i) { return preempted[i]; }
    /** Requests scheduled for the first time in this step (their queueing ended at {@link #startNanos()}). */
    public int admittedCount() { return admittedCount; }
    public EngineRequest admitted(int i) { return admitted[i]; }
    public BatchShape shape() { return shape; }
    /** Forward passes this step runs: above 1 for a multi-step decode round, whose tokens all come at its end. */
    public int gpuSteps() { return gpuSteps; }
    public long startNanos() { return startNanos; }
    public long durationNanos() { return durationNanos; }
    /** Part of the duration spent loading LoRA adapters into GPU slots before the step's forward pass. */
    public long loraLoadNanos() { return loraLoadNanos; }
    public long endNanos() { return startNanos + durationNanos; }
    /** Tokens computed in this step (decode tokens plus prefill chunk tokens), over all its forward passes. */
    public long tokens() { return shape.tokens() * gpuSteps; }
}
