package dev.infersim.engine;

/**
 * One serving engine's core loop, as vLLM V1 runs it, with time passed in by the caller so a virtual clock (the
 * simulator), the wall clock (the mock server) or a test can drive it:
 * <pre>
 *   plan = engine.planStep(now);          // null when idle
 *   ... wait until plan.endNanos() ...
 *   outcome = engine.completeStep(plan);  // tokens and finished requests
 * </pre>
 * Scheduling (vLLM V1 {@code Scheduler.schedule}): under a budget of {@code max_num_batched_tokens}, first every running
 * request gets its next token, or the next chunk of an unfinished prefill; if KV blocks run out, the policy's victim
 * (the newest request under FCFS) is preempted by recompute: its blocks are freed and it returns to the waiting queue.
 * Then, if nothing was preempted, waiting requests are admitted while the budget, {@code max_num_seqs} and free blocks
 * allow, each starting after its cached prefix, long prompts chunked to the remaining budget.
 *
 * <p>Not thread-safe: one thread owns an engine. Steady-state steps allocate nothing.
 */
public final class EngineCore {
    private final Deployment deployment;
    private final KvCapacity capacity;
    private final CostModel costModel;
    private final SchedulingPolicy policy;
    private final KvCacheManager kv;
    private final WaitingQueue waiting;
    private final EngineRequest[] running;
    private int runningCount;
    private final StepPlan plan;
    private final StepOutcome outcome;
    private boolean stepInFlight;
    private long steps;
    private long preemptions;
    private long promptTokensComputed;
    private long outputTokens;

    public EngineCore(Deployment deployment, KvCapacity capacity, CostModel costModel, SchedulingPolicy policy) {
        ConfigException.check(deployment.enableChunkedPrefill() || capacity.maxModelLen() <= deployment.maxNumBatchedTokens(),
                "--max-num-batched-tokens %d is below --max-model-len %d; with chunked prefill disabled every prompt must fit "
                        + "in one step", deployment.maxNumBatchedTokens(), capacity.maxModelLen());
        this.deployment = deployment;
        this.capacity = capacity;
        this.costModel = costModel;
        this.policy = policy;
        this.kv = new KvCacheManager(capacity.numBlocks(), capacity.blockSize(), deployment.enablePrefixCaching());
        this.waiting = policy.newWaitingQueue();
        this.running = new EngineRequest[deployment.maxNumSeqs()];
        this.plan = new StepPlan(deployment.maxNumSeqs());
        this.outcome = new StepOutcome(deployment.maxNumSeqs());
    }

    /** An engine with the deployment's memory-derived KV capacity, the roofline cost model and FCFS scheduling. */
    public static EngineCore create(Deployment deployment) {
        return new EngineCore(deployment, KvCapacity.of(deployment), new RooflineCostModel(deployment),
                SchedulingPolicies.byName("fcfs"));
    }

    /** Why a prompt of this length can never run here, or null when it can. */
    public String rejectionReason(int promptTokens) {
        if (promptTokens < 1) {
            return "the prompt is empty";
        }
        if (promptTokens >= capacity.maxModelLen()) {
            return "this model's maximum context length is " + capacity.maxModelLen() + " tokens; the prompt has "
                    + promptTokens + " tokens, leaving no room for output";
        }
        return null;
    }

    /** Queues a request that arrived at {@code nowNanos}. */
    public void submit(EngineRequest r) {
        String reason = rejectionReason(r.promptTokens());
        if (reason != null) {
            throw new IllegalArgumentException(reason);
        }
        if (r.status != EngineRequest.Status.NEW) {
            throw new IllegalStateException(r + " was already submitted");
        }
        r.outputLimit = Math.min(r.maxTokens(), capacity.maxModelLen() - r.promptTokens());
        r.status = EngineRequest.Status.WAITING;
        waiting.add(r);
    }

    /**
     * Stops a request now, waiting or running, and frees its blocks. If it is part of the step in flight, that step's
     * completion skips it. Aborting a finished request does nothing.
     *
     * @return false if the request had already finished
     */
    public boolean abort(EngineRequest r, FinishReason reason, long nowNanos) {
        switch (r.status) {
            case WAITING:
                waiting.remove(r);
                break;
            case RUNNING:
                removeRunning(r);
                kv.free(r);
                break;
            default:
                return false;
        }
        finish(r, reason, nowNanos);
        return true;
    }

    /**
     * Decides the next iteration at {@code nowNanos}. Returns null when there is nothing to run (the caller sleeps until
     * the next submit). Call {@link #completeStep} before planning again.
     */
    public StepPlan planStep(long nowNanos) {
        if (stepInFlight) {
            throw new IllegalStateException("planStep called before completeStep of the previous step");
        }
        plan.reset(nowNanos);
        int budget = scheduleRunning(deployment.maxNumBatchedTokens());
        if (plan.preemptedCount() == 0) {
            scheduleWaiting(budget, nowNanos);
        }
        if (plan.size == 0) {
            return null;
        }
        for (int i = 0; i < plan.size; i++) {
            EngineRequest r = plan.requests[i];
            int n = plan.newTokens[i];
            if (r.computedTokens >= r.promptTokens() && n == 1 && r.outputTokens > 0) {
                plan.shape.addDecode(r.computedTokens);
            } else {
                plan.shape.addPrefill(n, r.computedTokens, r.computedTokens + n >= r.totalTokens());
            }
        }
        plan.durationNanos = Math.max(1, costModel.stepNanos(plan.shape));
        stepInFlight = true;
        return plan;
    }

    private int scheduleRunning(int budget) {
        int i = 0;
        while (i < runningCount && budget > 0) {
            EngineRequest r = running[i];
            int tokens = Math.min(r.totalTokens() - r.computedTokens, budget);
            boolean preemptedSelf = false;
            while (!kv.allocateMore(r, tokens)) {
                int victimIndex = policy.chooseVictim(running, runningCount);
                EngineRequest victim = running[victimIndex];
                budget += plan.removeIfPresent(victim);
                preempt(victimIndex);
                if (victim == r) {
                    preemptedSelf = true;
                    break;
                }
                if (victimIndex < i) {
                    i--;
                }
            }
            if (preemptedSelf) {
                continue;
            }
            plan.add(r, tokens);
            budget -= tokens;
            i++;
        }
        return budget;
    }

    private void scheduleWaiting(int budget, long nowNanos) {
        while (budget > 0 && runningCount < running.length) {
            EngineRequest r = waiting.peek();
            if (r == null) {
                return;
            }
            int cachedBlocks = kv.findCachedBlocks(r);
            int cachedTokens = cachedBlocks * kv.blockSize();
            int tokens = r.totalTokens() - cachedTokens;
            if (!deployment.enableChunkedPrefill() && tokens > budget) {
                return;
            }
            tokens = Math.min(tokens, budget);
            if (!kv.allocateNew(r, cachedBlocks, tokens)) {
                return;
            }
            waiting.poll();
            kv.recordQuery(r.promptTokens(), cachedTokens);
            r.computedTokens = cachedTokens;
            r.status = EngineRequest.Status.RUNNING;
            running[runningCount++] = r;
            if (r.firstScheduledNanos < 0) {
                r.firstScheduledNanos = nowNanos;
                r.cachedPromptTokens = cachedTokens;
                plan.recordAdmitted(r);
            }
            plan.add(r, tokens);
            budget -= tokens;
        }
    }

    private void preempt(int index) {
        EngineRequest victim = running[index];
        System.arraycopy(running, index + 1, running, index, runningCount - index - 1);
        running[--runningCount] = null;
        kv.free(victim);
        victim.computedTokens = 0;
        victim.preemptions++;
        victim.status = EngineRequest.Status.WAITING;
        waiting.addPreempted(victim);
        preemptions++;
        plan.recordPreempted(victim);
    }

    /**
     * Applies a planned step at its end time: advances every request's computed tokens, samples one token for each
     * request whose prompt (or recompute) is done, finishes requests that hit EOS or their length limit, frees their blocks.
     */
    public StepOutcome completeStep(StepPlan step) {
        if (step != plan || !stepInFlight) {
            throw new IllegalStateException("completeStep needs the plan returned by the last planStep");
        }
        stepInFlight = false;
        long end = step.endNanos();
        outcome.reset(end);
        steps++;
        for (int i = 0; i < step.size; i++) {
            EngineRequest r = step.requests[i];
            if (r.status != EngineRequest.Status.RUNNING) {
                continue; // aborted while the step ran
            }
            int before = r.computedTokens;
            r.computedTokens += step.newTokens[i];
            if (before < r.promptTokens()) {
                promptTokensComputed += Math.min(r.computedTokens, r.promptTokens()) - before;
                kv.cacheComputedBlocks(r);
            }
            if (r.computedTokens < r.totalTokens()) {
                continue; // prefill chunk, no sample yet
            }
            r.outputTokens++;
            outputTokens++;
            if (r.firstTokenNanos < 0) {
                r.firstTokenNanos = end;
            }
            outcome.addToken(r);
            FinishReason reason = finishReason(r);
            if (reason != null) {
                removeRunning(r);
                kv.free(r);
                finish(r, reason, end);
                outcome.addFinished(r);
            }
        }
        return outcome;
    }

    private static FinishReason finishReason(EngineRequest r) {
        int out = r.outputTokens;
        if (out >= Math.max(r.eosAfterTokens(), r.minTokens()) && r.eosAfterTokens() <= r.outputLimit) {
            return FinishReason.STOP;
        }
        return out >= r.outputLimit ? FinishReason.LENGTH : null;
    }

    private void finish(EngineRequest r, FinishReason reason, long nowNanos) {
        r.status = EngineRequest.Status.FINISHED;
        r.finishReason = reason;
        r.finishedNanos = nowNanos;
    }

    private void removeRunning(EngineRequest r) {
        for (int i = 0; i < runningCount; i++) {
            if (running[i] == r) {
                System.arraycopy(running, i + 1, running, i, runningCount - i - 1);
                running[--runningCount] = null;
                return;
            }
        }
        throw new IllegalStateException(r + " is not running");
    }

    public Deployment deployment() { return deployment; }
    public KvCapacity capacity() { return capacity; }
    public CostModel costModel() { return costModel; }
    public SchedulingPolicy policy() { return policy; }
    public KvCacheManager kvCache() { return kv; }
    public int runningCount() { return runningCount; }
    public int waitingCount() { return waiting.size(); }
    public boolean isIdle() { return runningCount == 0 && waiting.size() == 0; }
    public long steps() { return steps; }
    public long preemptions() { return preemptions; }
    /** Prompt tokens actually computed (prefix-cache hits excluded, recomputation included). */
    public long promptTokensComputed() { return promptTokensComputed; }
    public long outputTokens() { return outputTokens; }
    public double kvCacheUsage() { return kv.usage(); }
}
