package dev.infersim.engine;

/**
 * vLLM V0's multi-step scheduling ({@code --num-scheduler-steps N}, vLLM PR 7000, RFC 6854): the scheduler runs once per
 * round of {@code N} decode steps, and the GPU advances the round's inputs itself between them. As vLLM V0 (v0.6.0)
 * does it:
 * <ul>
 *   <li>A step that prefills (a request admitted, a prompt chunk, a recompute) runs alone: the scheduler gives prefills
 *       no lookahead slots ({@code _get_num_lookahead_slots(is_prefill)} is 0 without chunked prefill), so their step
 *       is a round of one. What it plans is {@link VllmScheduler}'s.</li>
 *   <li>A step of decodes only becomes a round of {@code N} forward passes ({@link StepPlan#gpuSteps}): every request
 *       gets {@code N - 1} lookahead slots when the round starts, and the round runs all {@code N} passes for all of
 *       them, those that finish inside it included.</li>
 *   <li>Waiting requests are admitted only when a round ends: the scheduler is not called inside one.</li>
 *   <li>The round's tokens reach the client at its end: v0.6.0's engine processes a multi-step round's outputs after
 *       its last pass (streaming each pass's tokens came later, vLLM PR 8335, 2024-09-10, and was turned on by default
 *       in PR 9047), so every token of the round, and a finish inside it, carries the round's end time
 *       ({@link BatchState#updateFromOutput}).</li>
 *   <li>The host's time is paid once per round ({@link CostModelTiming}).</li>
 * </ul>
 * The fit of V0's host time with and without multi-step is bench/fidelity/README.md's.
 */
final class MultiStepScheduler implements Scheduler {
    private final VllmScheduler single;
    private final BatchState state;
    private final int steps;

    MultiStepScheduler(VllmScheduler single, int steps) {
        this.single = single;
        this.state = single.state();
        this.steps = steps;
    }

    @Override
    public boolean schedule(long nowNanos) {
        if (!single.schedule(nowNanos)) {
            return false;
        }
        StepPlan plan = state.plan;
        if (plan.admittedCount() > 0 || plan.preemptedCount() > 0) {
            return true;
        }
        for (int i = 0; i < plan.size; i++) {
            EngineRequest r = plan.requests[i];
            if (plan.newTokens[i] != 1 || r.computedTokens < r.promptTokens() || r.outputTokens == 0) {
                return true; // a prefill chunk or recompute runs as a step of its own
            }
        }
        for (int i = 0; i < plan.size; i++) {
            EngineRequest r = plan.requests[i];
            // Lookahead slots for the round's later tokens (as many as the request can still use); without room for
            // them the decodes run one step, as vLLM's scheduler would preempt instead.
            if (!state.kv.allocateMore(r, Math.min(steps, r.outputLimit - r.outputTokens))) {
                return true;
            }
        }
        plan.gpuSteps = steps;
        return true;
    }

    @Override
    public StepOutcome updateFromOutput(StepPlan step) {
        return single.updateFromOutput(step);
    }

    @Override
    public BatchState state() {
        return state;
    }
}
