package dev.infersim.engine;

import java.util.function.Consumer;

/**
 * What a vLLM V1 scheduler keeps, and the moves every {@link Scheduler} makes with it, after
 * vllm/v1/core/sched/scheduler.py
 * (https://github.com/vllm-project/vllm/blob/00024d314514900f361ad072af6931e403b7f589/vllm/v1/core/sched/scheduler.py):
 * the running batch in admission order, the waiting queue, the paged KV cache and the step being planned; making room
 * for a running request, preempting by recompute when blocks run out ({@link #allocateOrPreempt}), admitting waiting
 * requests ({@link #admitWaiting}) and applying a step's results ({@link #updateFromOutput}, vLLM's
 * {@code update_from_output}). Which running requests a step serves is the scheduler's choice; when an admitted request's
 * clock starts, and what it keeps per request, it says through its {@link Admission}.
 */
final class BatchState {

    /**
     * What the scheduler that owns this state decides, and hears, as requests join and leave the running batch.
     */
    interface Admission {

        /**
         * When the clock of a waiting request being admitted starts (its first scheduling time, when its queueing
         * ended), its admission having taken {@code blocks} free KV blocks.
         */
        long clockStart(EngineRequest r, int blocks, long nowNanos);

        /**
         * A request that just joined the running batch at {@code startNanos} with {@code tokens} to compute: its prompt
         * past the cached prefix, cut to what the budget had left.
         */
        void admitted(EngineRequest r, int tokens, long startNanos);

        /** A running request left the batch before its next token: preempted, or aborted. */
        void dropped(EngineRequest r);
    }

    final KvCacheManager kv;
    final WaitingQueue waiting;
    final StepPlan plan;
    final StepLoras loras;
    final KvConnector connector;
    private final SchedulingPolicy policy;
    private final Admission admission;
    private final boolean chunkedPrefill;
    private final EngineRequest[] running;
    private int runningCount;
    private final StepOutcome outcome;
    private int heldRequests;
    private long steps;
    private long preemptions;
    private long promptTokensComputed;
    private long outputTokens;

    BatchState(Deployment deployment, KvCapacity capacity, SchedulingPolicy policy, Admission admission) {
        this.policy = policy;
        this.admission = admission;
        this.chunkedPrefill = deployment.enableChunkedPrefill();
        this.kv = new KvCacheManager(capacity.numBlocks(), capacity.blockSize(), deployment.enablePrefixCaching(),
                deployment.enablePrefixCaching() ? new BlockHasher(deployment.prefixCachingHashAlgo(), deployment.hashSeed()) : null);
        this.waiting = policy.newWaitingQueue();
        this.running = new EngineRequest[deployment.maxNumSeqs()];
        this.loras = new StepLoras(deployment, waiting);
        this.plan = new StepPlan(deployment.maxNumSeqs(), loras);
        this.outcome = new StepOutcome(deployment.maxNumSeqs() * deployment.numSchedulerSteps());
        this.connector = new KvConnector(kv, waiting);
    }

    int runningCount() { return runningCount; }
    /** Running request {@code i}, for {@code i < runningCount()}: the running list, oldest admission first. */
    EngineRequest running(int i) { return running[i]; }
    /** {@code max_num_seqs}: the most requests the running batch holds. */
    int maxNumSeqs() { return running.length; }

    /**
     * Makes room for {@code tokens} more tokens of running request {@code r}, as vLLM's {@code schedule} does for each
     * running request:
     * <ul>
     *   <li>{@code new_blocks = self.kv_cache_manager.allocate_slots(request, num_new_tokens)}: blocks for the computed
     *       tokens plus the new ones ({@link KvCacheManager#allocateMore}).</li>
     *   <li>If that fails: {@code preempted_req = self.running.pop()} under FCFS, the last request of the running list
     *       (the most recently admitted, resumed ones included); under the priority policy
     *       {@code max(self.running, key=lambda r: (r.priority, r.arrival_time))}, whose scheduled tokens are given back
     *       to the budget ({@code token_budget += num_scheduled_tokens.pop(...)}, here by leaving the plan);
     *       {@link SchedulingPolicy#chooseVictim}. Repeated until the allocation succeeds or
     *       {@code preempted_req == request}: the request preempted itself ({@code if new_blocks is None: break}).</li>
     * </ul>
     *
     * @return how many of the victims had been planned earlier in this step (vLLM's {@code req_index -= 1} for each),
     *         or -1 when {@code r} preempted itself
     */
    int allocateOrPreempt(EngineRequest r, int tokens) {
        int unplanned = 0;
        while (!kv.allocateMore(r, tokens)) {
            int victimIndex = policy.chooseVictim(running, runningCount);
            EngineRequest victim = running[victimIndex];
            if (plan.removeIfPresent(victim)) {
                unplanned++;
            }
            plan.recordPreempted(evict(victimIndex));
            if (victim == r) {
                return -1;
            }
        }
        return unplanned;
    }

    /**
     * Admits waiting requests into the running batch, as vLLM's "Next, schedule the WAITING requests", for both schedulers:
     * <ul>
     *   <li>Only {@code if not preempted_reqs}: nothing is admitted in a step that preempted. The step's adapter set
     *       ({@link StepLoras}) starts from the running batch either way.</li>
     *   <li>{@code while self.waiting and token_budget > 0}, stopping at {@code len(self.running) ==
     *       self.max_num_running_reqs}; {@code get_computed_blocks(request)} gives the cached prefix (for a resumed
     *       request, its own freed blocks where not yet reused, capped at {@code num_tokens - 1});
     *       {@code num_new_tokens = request.num_tokens - num_computed_tokens} (prompt plus the outputs it had, for a
     *       resumed request), {@code min(num_new_tokens, token_budget)} with chunked prefill, else {@code break} when it
     *       does not fit.</li>
     *   <li>{@code allocate_slots} for the cached blocks and the chunk only (not the whole prompt): if it fails,
     *       {@code break}; waiting requests never preempt running ones.</li>
     *   <li>A remote-prefill request starts its KV pull instead, or, its KV arrived, computes the rest of its prompt
     *       ({@link KvConnector}).</li>
     * </ul>
     * The scheduler says when each admitted request's clock starts and plans it ({@link Admission#clockStart},
     * {@link Admission#admitted}).
     *
     * @param tokenBudget the step's token budget, less what the plan has scheduled so far
     * @return whether any request joined the running batch
     */
    boolean admitWaiting(long nowNanos, long tokenBudget) {
        loras.startFrom(running, runningCount);
        if (plan.preemptedCount() > 0) {
            return false;
        }
        boolean admitted = false;
        long budget;
        while ((budget = tokenBudget - plan.scheduledTokens) > 0 && runningCount < running.length) {
            EngineRequest r = waiting.peek();
            if (r == null) {
                break;
            }
            if (loras.skip(r)) {
                continue;
            }
            if (r.kvPull == EngineRequest.KvPull.PENDING) {
                if (!connector.startPull(r, nowNanos)) {
                    break;
                }
                continue;
            }
            if (r.kvPull == EngineRequest.KvPull.ARRIVED) {
                int tokens = (int) Math.min(r.totalTokens() - r.computedTokens, budget);
                if (!kv.allocateMore(r, tokens)) {
                    break;
                }
                r.kvPull = EngineRequest.KvPull.DONE;
                waiting.poll();
                start(r, nowNanos);
                admission.admitted(r, tokens, nowNanos);
                admitted = true;
                continue;
            }
            int cachedBlocks = kv.findCachedBlocks(r);
            int cachedTokens = cachedBlocks * kv.blockSize();
            int tokens = r.totalTokens() - cachedTokens;
            if (!chunkedPrefill && tokens > budget) {
                break;
            }
            tokens = (int) Math.min(tokens, budget);
            int blocks = kv.admit(r, cachedBlocks, tokens);
            if (blocks < 0) {
                break;
            }
            long startNanos = admission.clockStart(r, blocks, nowNanos);
            admit(r, cachedTokens, startNanos);
            admission.admitted(r, tokens, startNanos);
            admitted = true;
        }
        loras.restoreSkipped();
        return admitted;
    }

    /**
     * Moves the head of the waiting queue, whose blocks are allocated, into the running batch with its cached prefix
     * counted as computed. A request scheduled for the first time records when ({@code startNanos}) and its cache hit.
     */
    private void admit(EngineRequest r, int cachedTokens, long startNanos) {
        waiting.poll();
        kv.recordQuery(r.totalTokens(), cachedTokens);
        connector.recordQuery(r, cachedTokens);
        r.computedTokens = cachedTokens;
        if (r.firstScheduledNanos < 0) {
            r.cachedPromptTokens = cachedTokens;
        }
        start(r, startNanos);
    }

    /** Puts a request taken off the waiting queue, its blocks allocated, into the running batch. */
    private void start(EngineRequest r, long startNanos) {
        r.status = EngineRequest.Status.RUNNING;
        running[runningCount++] = r;
        if (r.firstScheduledNanos < 0) {
            r.firstScheduledNanos = startNanos;
            plan.recordAdmitted(r);
        }
        loras.add(r.lora());
    }

    /**
     * Preempts every running request by recompute, the last admitted first (back to the front of the waiting queue, in
     * running order), each told to {@code onPreempted}.
     */
    void preemptAll(Consumer<EngineRequest> onPreempted) {
        while (runningCount > 0) {
            onPreempted.accept(evict(runningCount - 1));
        }
    }

    /**
     * Preempts running request {@code index} as vLLM's {@code _preempt_request}: {@code kv_cache_manager.free(request)},
     * {@code status = PREEMPTED}, {@code num_computed_tokens = 0}, {@code num_preemptions += 1},
     * {@code waiting.prepend_request(request)}: recompute, never swap, and the victim goes to the front of the waiting
     * queue. Its freed blocks stay in the prefix cache (V1 hashes every full block) until reused
     * ({@link KvCacheManager#keepForResume}).
     */
    private EngineRequest evict(int index) {
        EngineRequest victim = running[index];
        System.arraycopy(running, index + 1, running, index, runningCount - index - 1);
        running[--runningCount] = null;
        kv.keepForResume(victim);
        kv.free(victim);
        admission.dropped(victim);
        victim.computedTokens = 0;
        victim.preemptions++;
        victim.status = EngineRequest.Status.WAITING;
        waiting.addPreempted(victim);
        preemptions++;
        return victim;
    }

    /**
     * Stops a request now, waiting, waiting for its KV or running, and frees its blocks; false if it had already
     * finished.
     */
    boolean abort(EngineRequest r, FinishReason reason, long nowNanos) {
        switch (r.status) {
            case WAITING:
                waiting.remove(r);
                connector.noLongerNeeded(r, nowNanos);
                break;
            case LOADING:
                connector.abortPull(r);
                kv.free(r);
                connector.noLongerNeeded(r, nowNanos);
                break;
            case RUNNING:
                removeRunning(r);
                kv.free(r);
                admission.dropped(r);
                break;
            default:
                return false;
        }
        finish(r, reason, nowNanos);
        return true;
    }

    /**
     * Applies a step at its end time, as vLLM's {@code update_from_output}: advances every request's computed tokens,
     * samples one token for each request whose prompt (or recompute) is done, finishes requests that hit EOS or their
     * length limit and frees their blocks. A finished {@link EngineRequest.Disaggregation#REMOTE_DECODE} request keeps
     * its blocks instead ({@code request_finished} returns {@code delay_free_blocks}) until {@link #releaseKv}: the
     * decode side's notification, or the lease's end (vllm/v1/core/sched/scheduler.py,
     * https://github.com/vllm-project/vllm/blob/9aaf83ef502fc37bc647f6e474314d48ba36cd1c/vllm/v1/core/sched/scheduler.py).
     */
    StepOutcome updateFromOutput(StepPlan step) {
        long end = step.endNanos();
        outcome.reset(end);
        steps += step.gpuSteps;
        for (int pass = 0; pass < step.gpuSteps; pass++) {
            applyPass(step, end);
        }
        return outcome;
    }

    /**
     * One forward pass of {@code step}: its requests' tokens computed, a sample for each whose prompt is done. A
     * multi-step round's passes all end at {@code end}, when its outputs are processed; a request that finished in an
     * earlier pass is skipped (vLLM computes its lookahead slots to the round's end and drops their tokens).
     */
    private void applyPass(StepPlan step, long end) {
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
                if (r.disaggregation() == EngineRequest.Disaggregation.REMOTE_DECODE) {
                    r.kvHeld = true; // vLLM's delay_free_blocks: the decode side reads them first
                    heldRequests++;
                } else {
                    kv.free(r);
                }
                finish(r, reason, end);
                outcome.addFinished(r);
            }
        }
    }

    /** Frees the blocks a finished remote-decode request held for its decode engine; false when it held none. */
    boolean releaseKv(EngineRequest r) {
        if (!r.kvHeld) {
            return false;
        }
        r.kvHeld = false;
        heldRequests--;
        kv.free(r);
        return true;
    }

    private static FinishReason finishReason(EngineRequest r) {
        int out = r.outputTokens;
        if (out >= Math.max(r.eosAfterTokens(), r.minTokens()) && r.eosAfterTokens() <= r.outputLimit) {
            return FinishReason.STOP;
        }
        return out >= r.outputLimit ? FinishReason.LENGTH : null;
    }

    private static void finish(EngineRequest r, FinishReason reason, long nowNanos) {
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

    int heldCount() { return heldRequests; }
    long steps() { return steps; }
    long preemptions() { return preemptions; }
    long promptTokensComputed() { return promptTokensComputed; }
    long outputTokens() { return outputTokens; }
}
