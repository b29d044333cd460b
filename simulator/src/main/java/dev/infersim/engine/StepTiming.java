package dev.infersim.engine;

/**
 * What times an engine's steps, and so decides which running requests each step serves: {@link CostModelTiming}, vLLM's
 * scheduler with one token budget per step and a {@link CostModel} pricing each step, or {@link FixedLatencyTiming},
 * per-request latencies ({@link FixedTiming}) with no step cost. The {@link Scheduler} holds what both share (the
 * running batch, the waiting queue, the KV cache, the step being planned) and makes the moves both make: room for a
 * running request, preempting when blocks run out; the admission of waiting requests; applying a step's results. One
 * instance per engine: a timing may keep per-request state.
 */
interface StepTiming {

    /**
     * Fills the scheduler's plan for a step starting at {@code nowNanos}, admitting waiting requests through
     * {@link Scheduler#admitWaiting}; false when no step runs (the engine idles until the next submit).
     */
    boolean schedule(Scheduler s, long nowNanos);

    /** How long the planned step runs, its batch shape described. */
    long stepNanos(Scheduler s, StepPlan plan);

    /**
     * When the clock of a waiting request being admitted starts (its first scheduling time, when its queueing ended),
     * its admission having taken {@code blocks} free KV blocks.
     */
    long clockStart(Scheduler s, EngineRequest r, int blocks, long nowNanos);

    /**
     * A request that just joined the running batch at {@code startNanos} with {@code tokens} to compute: its prompt past
     * the cached prefix, cut to what the budget had left.
     */
    void admitted(Scheduler s, EngineRequest r, int tokens, long startNanos);

    /** After a step's results are applied ({@link Scheduler#updateFromOutput}). */
    default void completed(Scheduler s, StepOutcome outcome) {
    }

    /** A running request left the batch before its next token: preempted, or aborted. */
    default void dropped(EngineRequest r) {
    }

    /**
     * Every duration this timing gives from now on (a step's, a latency drawn) multiplied by {@code scale}: the GPU
     * running slower (above 1) or faster than its profile.
     */
    void latencyScale(double scale);
}
