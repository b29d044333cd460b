package dev.infersim.engine;

/**
 * One generation request as the engine sees it: its inputs, fixed at creation, and its progress, which only the
 * {@link EngineCore} that owns it changes. One object per request carries everything, so a step touches no maps.
 */
public final class EngineRequest {
    /** No EOS: the request runs until max_tokens (vLLM's ignore_eos). */
    public static final int NO_EOS = Integer.MAX_VALUE;

    enum Status { NEW, WAITING, LOADING, RUNNING, FINISHED }

    /**
     * A request's part in prefill/decode disaggregation, as vLLM's {@code kv_transfer_params} set it: {@link #NONE};
     * {@link #REMOTE_DECODE} ({@code do_remote_decode}): prefill here and, once finished, hold the KV blocks for a
     * decode engine to pull; {@link #REMOTE_PREFILL} ({@code do_remote_prefill}): the prompt's KV was computed by a
     * prefill engine, pull it over the {@link KvTransferLink} instead of computing it.
     */
    public enum Disaggregation { NONE, REMOTE_DECODE, REMOTE_PREFILL }

    /** Where a {@link Disaggregation#REMOTE_PREFILL} request's pull stands. */
    enum KvPull { NONE, PENDING, IN_FLIGHT, ARRIVED, DONE }

    private final long id;
    private final int promptTokens;
    private final int[] promptTokenIds;
    private final int maxTokens;
    private final int minTokens;
    private int eosAfterTokens;
    private final int priority;
    private final long arrivalNanos;
    private final LoraAdapter lora;
    private Object attachment;
    private Disaggregation disaggregation = Disaggregation.NONE;

    // progress, owned by the engine
    Status status = Status.NEW;
    int computedTokens;
    int outputTokens;
    int[] blocks = new int[4];
    int numBlocks;
    /** Prompt blocks whose hash is registered in the prefix cache. */
    int numCachedBlocks;
    long[] blockHashes;
    int cachedPromptTokens = -1;
    long firstScheduledNanos = -1;
    long firstTokenNanos = -1;
    long finishedNanos = -1;
    int preemptions;
    FinishReason finishReason;
    int outputLimit;
    /** Under {@link FixedTiming}: when this request's next token is due. */
    long dueNanos = -1;
    // disaggregation: a decode request's pull, a prefill request's held blocks
    KvPull kvPull = KvPull.NONE;
    long kvTransferStartNanos = -1;
    long kvTransferEndNanos = -1;
    int kvTransferTokens;
    boolean kvHeld;

    /**
     * @param id              caller's id, unique per engine
     * @param promptTokens    prompt length in tokens
     * @param promptTokenIds  the prompt's token ids, for prefix caching; null when unknown (no prefix sharing)
     * @param maxTokens       max_tokens: the output cap
     * @param minTokens       min_tokens: EOS is ignored before this many outputs
     * @param eosAfterTokens  output count at which the model emits EOS; {@link #NO_EOS} for ignore_eos
     * @param priority        lower runs first under the priority policy (vLLM semantics)
     * @param arrivalNanos    when the request reached the engine
     */
    public EngineRequest(long id, int promptTokens, int[] promptTokenIds, int maxTokens, int minTokens, int eosAfterTokens,
                         int priority, long arrivalNanos) {
        this(id, promptTokens, promptTokenIds, maxTokens, minTokens, eosAfterTokens, priority, arrivalNanos, null);
    }

    /** As above, on the LoRA adapter {@code lora} (null: the base model). */
    public EngineRequest(long id, int promptTokens, int[] promptTokenIds, int maxTokens, int minTokens, int eosAfterTokens,
                         int priority, long arrivalNanos, LoraAdapter lora) {
        if (promptTokens < 1) {
            throw new IllegalArgumentException("prompt must have at least 1 token, got " + promptTokens);
        }
        if (promptTokenIds != null && promptTokenIds.length != promptTokens) {
            throw new IllegalArgumentException("promptTokenIds has " + promptTokenIds.length + " ids for " + promptTokens + " tokens");
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("max_tokens must be >= 1, got " + maxTokens);
        }
        if (minTokens < 0 || minTokens > maxTokens) {
            throw new IllegalArgumentException("min_tokens must be between 0 and max_tokens " + maxTokens + ", got " + minTokens);
        }
        if (eosAfterTokens < 1) {
            throw new IllegalArgumentException("eosAfterTokens must be >= 1, got " + eosAfterTokens);
        }
        this.id = id;
        this.promptTokens = promptTokens;
        this.promptTokenIds = promptTokenIds;
        this.maxTokens = maxTokens;
        this.minTokens = minTokens;
        this.eosAfterTokens = eosAfterTokens;
        this.priority = priority;
        this.arrivalNanos = arrivalNanos;
        this.lora = lora;
    }

    public long id() { return id; }
    public int promptTokens() { return promptTokens; }
    public int[] promptTokenIds() { return promptTokenIds; }
    public int maxTokens() { return maxTokens; }
    public int minTokens() { return minTokens; }
    public int eosAfterTokens() { return eosAfterTokens; }

    /**
     * Ends the request after {@code outputTokens} outputs at the latest, as EOS would: a driver that finds a stop string
     * in the text the request is about to generate (vLLM's stop strings, which a sampler cannot know of in advance)
     * moves the end there before the step that produces it. Never moves the end later.
     */
    public void stopAt(int outputTokens) {
        if (outputTokens < 1) {
            throw new IllegalArgumentException("a request stops after at least 1 output, got " + outputTokens);
        }
        eosAfterTokens = Math.min(eosAfterTokens, outputTokens);
    }
    public int priority() { return priority; }
    public long arrivalNanos() { return arrivalNanos; }
    /** The LoRA adapter the request runs on; null for the base model. */
    public LoraAdapter lora() { return lora; }

    /** This request's part in prefill/decode disaggregation; {@link Disaggregation#NONE} unless set before submit. */
    public Disaggregation disaggregation() { return disaggregation; }

    /** Sets this request's part in prefill/decode disaggregation; only before it is submitted. */
    public EngineRequest disaggregate(Disaggregation role) {
        if (status != Status.NEW) {
            throw new IllegalStateException(this + " was already submitted");
        }
        disaggregation = java.util.Objects.requireNonNull(role, "role");
        kvPull = role == Disaggregation.REMOTE_PREFILL ? KvPull.PENDING : KvPull.NONE;
        return this;
    }

    /** A remote-prefill request: when its engine began pulling its prompt's KV (allocated its blocks); -1 before. */
    public long kvTransferStartNanos() { return kvTransferStartNanos; }
    /** A remote-prefill request: when its KV will have arrived (or did); -1 before its pull began. */
    public long kvTransferEndNanos() { return kvTransferEndNanos; }
    /** A remote-prefill request: prompt tokens pulled (those not found in the local prefix cache); 0 before. */
    public int kvTransferTokens() { return kvTransferTokens; }
    /** A remote-decode request that finished and still holds its KV blocks for the decode engine to pull. */
    public boolean isKvHeld() { return kvHeld; }
    /** Tokens whose KV the engine has computed (or received) for this request. */
    public int computedTokens() { return computedTokens; }

    /** The ids of the KV blocks the request holds, in order (vLLM's {@code block_ids}, the prefill side's {@code remote_block_ids}). */
    public int[] blockIds() {
        return java.util.Arrays.copyOf(blocks, numBlocks);
    }

    /** The driver's own per-request state (a connection, a metrics record); the engine never reads it. */
    public Object attachment() { return attachment; }
    public void attach(Object value) { attachment = value; }

    /** Tokens generated so far. */
    public int outputTokens() { return outputTokens; }
    /** Prompt tokens served from the prefix cache when the request was first scheduled; -1 before that. */
    public int cachedPromptTokens() { return cachedPromptTokens; }
    /** When the request first entered a running batch; -1 while it has only waited. */
    public long firstScheduledNanos() { return firstScheduledNanos; }
    /** End of the step that produced the first output token; -1 before. */
    public long firstTokenNanos() { return firstTokenNanos; }
    public long finishedNanos() { return finishedNanos; }
    public int preemptions() { return preemptions; }
    public FinishReason finishReason() { return finishReason; }
    public boolean isFinished() { return status == Status.FINISHED; }
    public boolean isRunning() { return status == Status.RUNNING; }
    /** Waiting for admission, or for its remote prefill's KV to arrive (vLLM counts both as waiting). */
    public boolean isWaiting() { return status == Status.WAITING || status == Status.LOADING; }

    /** Prompt plus generated tokens: what the KV cache must hold once the next token is computed. */
    int totalTokens() {
        return promptTokens + outputTokens;
    }

    @Override
    public String toString() {
        return "request " + id + " (prompt " + promptTokens + ", output " + outputTokens + ", " + status + ")";
    }
}
