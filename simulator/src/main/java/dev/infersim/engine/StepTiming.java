package dev.infersim.engine;

/**
 * How long a planned step runs: {@link CostModelTiming}, the {@link CostModel}'s price of the step's batch (its LoRA
 * loads included) with the engine version's host time, or {@link FixedLatencyScheduler}, whose per-request timelines
 * end the step at the first token due. It prices the batch the {@link Scheduler} planned and chooses nothing. One
 * instance per engine.
 */
interface StepTiming {

    /** How long the planned step runs, its batch shape described. */
    long stepNanos(StepPlan plan);

    /**
     * Every duration this timing gives from now on (a step's, a latency drawn) multiplied by {@code scale}: the GPU
     * running slower (above 1) or faster than its profile.
     */
    void latencyScale(double scale);
}
