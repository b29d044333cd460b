package dev.infersim.engine;

/**
 * vLLM V1's scheduling policy: each step is what vLLM V1's {@code Scheduler.schedule} puts in it
 * (vllm/v1/core/sched/scheduler.py,
 * https://github.com/vllm-project/vllm/blob/00024d314514900f361ad072af6931e403b7f589/vllm/v1/core/sched/scheduler.py),
 * statement by statement:
 * <ol>
 *   <li>{@code token_budget = self.max_num_scheduled_tokens}: one budget of {@code max_num_batched_tokens} per step.</li>
 *   <li>"First, schedule the RUNNING requests": {@code while req_index < len(self.running) and token_budget > 0}, in
 *       running order, oldest admission first ({@link #scheduleRunning}).</li>
 *   <li>{@code num_new_tokens = request.num_tokens_with_spec - request.num_computed_tokens}, then
 *       {@code min(num_new_tokens, token_budget)}: a decode gets one token, an unfinished prefill (or recompute) its
 *       next chunk.</li>
 *   <li>{@code allocate_slots}, preempting the policy's victim by recompute ({@code _preempt_request}) while it fails,
 *       until it fits or the request preempted itself and the running loop stops ({@link BatchState#allocateOrPreempt}).</li>
 *   <li>"Next, schedule the WAITING requests" only {@code if not preempted_reqs}, a prompt chunk each within the budget
 *       left, never preempting ({@link BatchState#admitWaiting}).</li>
 * </ol>
 * A hand-worked case is {@code PreemptionTest}; bench/simulator/README.md explains the preemptions of 20,000-token
 * prompts at the KV limit with it. Its steps are priced by a {@link CostModelTiming}.
 */
final class VllmScheduler implements Scheduler, BatchState.Admission {
    private final BatchState state;
    private final int maxNumBatchedTokens;

    VllmScheduler(Deployment deployment, KvCapacity capacity, SchedulingPolicy policy) {
        this.state = new BatchState(deployment, capacity, policy, this);
        this.maxNumBatchedTokens = deployment.maxNumBatchedTokens();
    }

    @Override
    public boolean schedule(long nowNanos) {
        scheduleRunning();
        state.admitWaiting(nowNanos, maxNumBatchedTokens);
        return state.plan.size() > 0;
    }

    /** The running requests in running order, each its next tokens within the budget left, preempting for room. */
    private void scheduleRunning() {
        StepPlan plan = state.plan;
        int i = 0;
        int budget;
        while (i < state.runningCount() && (budget = (int) (maxNumBatchedTokens - plan.scheduledTokens)) > 0) {
            EngineRequest r = state.running(i);
            int tokens = Math.min(r.totalTokens() - r.computedTokens, budget);
            int unplanned = state.allocateOrPreempt(r, tokens);
            if (unplanned < 0) {
                continue; // it preempted itself: the next request has moved to index i
            }
            i -= unplanned; // victims planned before it left the running list ahead of it
            plan.add(r, tokens);
            i++;
        }
    }

    /** A waiting request's clock starts when the step that admits it does. */
    @Override
    public long clockStart(EngineRequest r, int blocks, long nowNanos) {
        return nowNanos;
    }

    @Override
    public void admitted(EngineRequest r, int tokens, long startNanos) {
        state.plan.add(r, tokens);
    }

    @Override
    public void dropped(EngineRequest r) {
    }

    @Override
    public StepOutcome updateFromOutput(StepPlan step) {
        return state.updateFromOutput(step);
    }

    @Override
    public BatchState state() {
        return state;
    }
}
