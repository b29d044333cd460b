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
 *
 * <p>The engine version's {@link HostTime} is added to (or overlapped with) the GPU's work, adapter loads included;
 * a speed factor scales the GPU's work only.
 */
final class CostModelTiming implements StepTiming {
    private final CostModel costModel;
    private final HostTime hostTime;
    private final int maxNumBatchedTokens;
    /** The GPU's slowdown ({@link #latencyScale}); the host's time is the CPU's and keeps its length. */
    private double scale = 1;

    /** Steps priced by {@code costModel} (the GPU's work), {@code hostTime} added or overlapped. */
    CostModelTiming(CostModel costModel, HostTime hostTime, int maxNumBatchedTokens) {
        this.costModel = costModel;
        this.hostTime = hostTime;
        this.maxNumBatchedTokens = maxNumBatchedTokens;
    }

    @Override
    public boolean schedule(Scheduler s, long nowNanos) {
        scheduleRunning(s);
        s.admitWaiting(nowNanos, maxNumBatchedTokens);
        return s.plan.size() > 0;
    }

    @Override
    public void latencyScale(double scale) {
        this.scale = scale;
    }

    /** The running requests in running order, each its next tokens within the budget left, preempting for room. */
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
        long gpu = Math.max(1, costModel.stepNanos(plan.shape)) + plan.loraLoadNanos;
        if (scale != 1) {
            gpu = Math.max(1, Math.round(gpu * scale));
        }
        return hostTime.isNone() ? gpu : hostTime.stepNanos(gpu, plan.shape);
    }
}
