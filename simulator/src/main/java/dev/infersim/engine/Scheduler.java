package dev.infersim.engine;

/**
 * The engine's plug point for scheduling, as vLLM V1's {@code SchedulerInterface} (vllm/v1/core/sched/interface.py,
 * https://github.com/vllm-project/vllm/blob/00024d314514900f361ad072af6931e403b7f589/vllm/v1/core/sched/interface.py):
 * {@link #schedule} decides the next step's batch and {@link #updateFromOutput} applies what the step produced, as
 * vLLM's {@code schedule()} and {@code update_from_output()}; the queues, the KV cache and the moves every scheduler
 * makes with them are its {@link #state()}. {@link VllmScheduler} is vLLM V1's policy; {@link FixedLatencyScheduler}
 * serves each request on its own fixed-latency timeline. How long a planned step runs is for the engine's
 * {@link StepTiming} to say.
 */
interface Scheduler {

    /**
     * Plans the step starting at {@code nowNanos} into {@link BatchState#plan}, reset for it: which running requests
     * compute how many tokens, and which waiting ones are admitted. False when no step runs (the engine idles until the
     * next submit).
     */
    boolean schedule(long nowNanos);

    /** Applies the planned step at its end: tokens sampled, requests finished ({@link BatchState#updateFromOutput}). */
    StepOutcome updateFromOutput(StepPlan step);

    /** The running batch, the waiting queue, the KV cache and the step being planned. */
    BatchState state();
}
