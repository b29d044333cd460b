package dev.infersim.engine;

/**
 * The cost-model engine: each step is what vLLM V1's {@code Scheduler.schedule} puts in it
 * (vllm/v1/core/sched/scheduler.py,
 * https://github.com/vllm-project/vllm/blob/00024d314514900f361ad072af6931e403b7f589/vllm/v1/core/sched/scheduler.py),
 * statement by statement, and lasts what the {@link CostModel} prices its batch at:
 * <ol>
 *   <li>{@code token_budget = self.max_num_scheduled_tokens}: one budget of {@code max_num_batched_tokens} per step.</li>
 *   <li>"First, schedule the RUNNING requests": {@code while req_index < len(self.running) and token_budget > 0}, in
 *       running order, oldest admission first ({@link #scheduleRunning}).</li>
 *   <li>{@code num_new_tokens = request.num_tokens_with_spec - request.num_computed_tokens}, then
 *       {@code min(num_new_tokens, token_budget)}: a decode gets one token, an unfinished prefill (or recompute) its
 *       next chunk.</li>
 *   <li>{@code allocate_slots}, preempting the policy's victim by recompute ({@code _preempt_request}) while it fails,
 *       until it fits or the request preempted itself and the running loop stops ({@link Scheduler#allocateOrPreempt}).</li>
 *   <li>"Next, schedule the WAITING requests" only {@code if not preempted_reqs}, a prompt chunk each within the budget
 *       left, never preempting ({@link Scheduler#admitWaiting}).</li>
 * </ol>
 * A hand-worked case is {@code PreemptionTest}; bench/simulator/README.md explains the preemptions of 20,000-token
 * prompts at the KV limit with it.
 *
 * <p>LoRA: before the step runs, each of its adapters not in a GPU slot is loaded ({@link LoraSlots}), which lengthens
 * the step by the load time ({@link StepLoras#load}).
 */
final class CostModelTiming implements StepTiming {
    private final CostModel costModel;
    private final int maxNumBatchedTokens;
    private double scale = 1;

    CostModelTiming(CostModel costModel, int maxNumBatchedTokens) {
        this.costModel = costModel;
        this.maxNumBatchedTokens = maxNumBatchedTokens;
    }

    @Override
    public boolean schedule(Scheduler s, long nowNanos) {
        scheduleRunning(s);
        s.admitWaiting(nowNanos, maxNumBatchedTokens);
        return s.plan.size() > 0;
    }

    /** The running requests in running order, each its next tokens within the budget left, preempting for room. */
    @Override
    public void latencyScale(double scale) {
        this.scale = scale;
    }

    private void scheduleRunning(Scheduler s) {
        StepPlan plan = s.plan;
        int i = 0;
        int budget;
        while (i < s.runningCount() && (budget = (int) (maxNumBatchedTokens - plan.scheduledTokens)) > 0) {
            EngineRequest r = s.running(i);
            int tokens = Math.min(r.totalTokens() - r.computedTokens, budget);
            int unplanned = s.allocateOrPreempt(r, tokens);
            if (unplanned < 0) {
                continue; // it preempted itself: the next request has moved to index i
            }
            i -= unplanned; // victims planned before it left the running list ahead of it
            plan.add(r, tokens);
            i++;
        }
    }

    @Override
    public long clockStart(Scheduler s, EngineRequest r, int blocks, long nowNanos) {
        return nowNanos;
    }

    @Override
    public void admitted(Scheduler s, EngineRequest r, int tokens, long startNanos) {
        s.plan.add(r, tokens);
    }

    @Override
    public long stepNanos(Scheduler s, StepPlan plan) {
        plan.shape.loraAdapters(s.loras.count());
        plan.loraLoadNanos = s.loras.load();
        long nanos = Math.max(1, costModel.stepNanos(plan.shape)) + plan.loraLoadNanos;
        return scale == 1 ? nanos : Math.max(1, Math.round(nanos * scale));
    }
}
