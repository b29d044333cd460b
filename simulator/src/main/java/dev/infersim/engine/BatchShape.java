package dev.infersim.engine;

/**
 * What one engine iteration computes, reduced to the sums a cost model needs. vLLM V1 runs decode tokens and prefill
 * chunks in one forward pass; a shape holds both. Mutable and reused step after step so the hot path allocates nothing.
 */
public final class BatchShape {
    private int decodeSeqs;
    private long decodeContextTokens;
    private int prefillChunks;
    private long prefillTokens;
    private double prefillAttentionPairs;
    private long prefillContextTokens;
    private int samplingSeqs;
    private long loraTokens;
    private int loraAdapters;
    private int newRequests;

    public void clear() {
        newRequests = 0;
        loraTokens = 0;
        loraAdapters = 0;
        decodeSeqs = 0;
        decodeContextTokens = 0;
        prefillChunks = 0;
        prefillTokens = 0;
        prefillAttentionPairs = 0;
        prefillContextTokens = 0;
        samplingSeqs = 0;
    }

    /** One decode token for a sequence that already holds {@code contextTokens} tokens in its KV cache. */
    public BatchShape addDecode(int contextTokens) {
        decodeSeqs++;
        decodeContextTokens += contextTokens + 1;
        samplingSeqs++;
        return this;
    }

    /**
     * A prefill chunk of {@code chunkTokens} new tokens after {@code contextTokens} already cached or computed ones.
     *
     * @param samples whether this chunk finishes the prompt, so the sequence samples a token at the end of the step
     */
    public BatchShape addPrefill(int chunkTokens, int contextTokens, boolean samples) {
        prefillChunks++;
        prefillTokens += chunkTokens;
        // causal attention: token i of the chunk attends to context + i + 1 keys
        prefillAttentionPairs += (double) chunkTokens * contextTokens + (double) chunkTokens * (chunkTokens + 1) / 2.0;
        prefillContextTokens += contextTokens + chunkTokens;
        if (samples) {
            samplingSeqs++;
        }
        return this;
    }

    /** {@code tokens} of the step's tokens (decode or prefill, counted also by the calls above) run on a LoRA adapter. */
    public BatchShape addLoraTokens(int tokens) {
        loraTokens += tokens;
        return this;
    }

    /** The distinct LoRA adapters the step's batch runs on, whose weights its LoRA kernels read. */
    public BatchShape loraAdapters(int adapters) {
        loraAdapters = adapters;
        return this;
    }

    /** {@code requests} of the step's sequences are scheduled for the first time: the engine takes them in this step. */
    public BatchShape addNewRequests(int requests) {
        newRequests += requests;
        return this;
    }

    /** Requests the step schedules for the first time (counted also as prefill chunks). */
    public int newRequests() {
        return newRequests;
    }

    public long loraTokens() {
        return loraTokens;
    }

    public int loraAdapters() {
        return loraAdapters;
    }

    /** Tokens pushed through the linear layers this step. */
    public long tokens() {
        return decodeSeqs + prefillTokens;
    }

    public int sequences() {
        return decodeSeqs + prefillChunks;
    }

    public int decodeSeqs() {
        return decodeSeqs;
    }

    /** Sum over decode sequences of the keys each attends to (its context plus the new token). */
    public long decodeContextTokens() {
        return decodeContextTokens;
    }

    public int prefillChunks() {
        return prefillChunks;
    }

    public long prefillTokens() {
        return prefillTokens;
    }

    /** Query-key pairs of prefill attention under the causal mask. */
    public double prefillAttentionPairs() {
        return prefillAttentionPairs;
    }

    /** KV entries prefill attention reads: each chunk's context plus the chunk itself. */
    public long prefillContextTokens() {
        return prefillContextTokens;
    }

    /** Sequences that run the LM head and sample a token. */
    public int samplingSeqs() {
        return samplingSeqs;
    }

    public boolean isEmpty() {
        return decodeSeqs == 0 && prefillChunks == 0;
    }
}
