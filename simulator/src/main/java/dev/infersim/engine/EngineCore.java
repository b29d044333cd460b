package dev.infersim.engine;

import dev.infersim.common.ConfigException;
import dev.infersim.common.SplitMix64;

import java.util.PriorityQueue;

/**
 * One serving engine's core loop, as vLLM V1 runs it, with time passed in by the caller so a virtual clock (the
 * simulator), the wall clock (the mock server) or a test can drive it:
 * <pre>
 *   plan = engine.planStep(now);          // null when idle
 *   ... wait until plan.endNanos() ...
 *   outcome = engine.completeStep(plan);  // tokens and finished requests
 * </pre>
 * Scheduling and preemption follow vLLM V1's {@code Scheduler.schedule} and {@code Scheduler._preempt_request}
 * (vllm/v1/core/sched/scheduler.py, https://github.com/vllm-project/vllm/blob/00024d314514900f361ad072af6931e403b7f589/vllm/v1/core/sched/scheduler.py),
 * statement by statement:
 * <ol>
 *   <li>{@code token_budget = self.max_num_scheduled_tokens}: one budget of {@code max_num_batched_tokens} per step.</li>
 *   <li>"First, schedule the RUNNING requests": {@code while req_index < len(self.running) and token_budget > 0}, in
 *       running order, oldest admission first ({@link #scheduleRunning}).</li>
 *   <li>{@code num_new_tokens = request.num_tokens_with_spec - request.num_computed_tokens}, then
 *       {@code min(num_new_tokens, token_budget)}: a decode gets one token, an unfinished prefill (or recompute) its
 *       next chunk.</li>
 *   <li>{@code new_blocks = self.kv_cache_manager.allocate_slots(request, num_new_tokens)}: blocks for the computed
 *       tokens plus the new ones ({@link KvCacheManager#allocateMore}).</li>
 *   <li>If that fails: {@code preempted_req = self.running.pop()} under FCFS, the last request of the running list
 *       (the most recently admitted, resumed ones included); under the priority policy
 *       {@code max(self.running, key=lambda r: (r.priority, r.arrival_time))}, whose scheduled tokens are given back
 *       to the budget ({@code token_budget += num_scheduled_tokens.pop(...)}); {@link SchedulingPolicy#chooseVictim}.
 *       Repeated until the allocation succeeds or {@code preempted_req == request}: the request preempted itself and
 *       the running loop stops ({@code if new_blocks is None: break}).</li>
 *   <li>{@code _preempt_request}: {@code kv_cache_manager.free(request)}, {@code status = PREEMPTED},
 *       {@code num_computed_tokens = 0}, {@code num_preemptions += 1}, {@code waiting.prepend_request(request)}:
 *       recompute, never swap, and the victim goes to the front of the waiting queue ({@link #evict}). Its freed blocks
 *       stay in the prefix cache (V1 hashes every full block) until reused ({@link KvCacheManager#keepForResume}).</li>
 *   <li>"Next, schedule the WAITING requests" only {@code if not preempted_reqs}: no admission in a step that
 *       preempted ({@link #planStep}).</li>
 *   <li>{@code while self.waiting and token_budget > 0}, stopping at {@code len(self.running) ==
 *       self.max_num_running_reqs}; {@code get_computed_blocks(request)} gives the cached prefix (for a resumed
 *       request, its own freed blocks where not yet reused, capped at {@code num_tokens - 1});
 *       {@code num_new_tokens = request.num_tokens - num_computed_tokens} (prompt plus the outputs it had, for a
 *       resumed request), {@code min(num_new_tokens, token_budget)} with chunked prefill, else {@code break} when it
 *       does not fit ({@link #scheduleWaiting}).</li>
 *   <li>{@code allocate_slots} for the cached blocks and the chunk only (not the whole prompt): if it fails,
 *       {@code break}; waiting requests never preempt running ones.</li>
 * </ol>
 * A hand-worked case is {@code PreemptionTest}; bench/simulator/README.md explains the preemptions of 20,000-token
 * prompts at the KV limit with it.
 *
 * <p>LoRA (vLLM V1's rule): a step's batch runs on at most {@code max_loras} distinct adapters. Admission starts from
 * the adapters of the running batch; a waiting request on another adapter once that many are in is skipped, not
 * blocking the requests behind it, and keeps its place in the queue for the next step. Before the step runs, each of
 * its adapters not in a GPU slot is loaded ({@link LoraSlots}), which lengthens the step by the load time. Under
 * {@link FixedTiming} only the adapter limit applies: the fixed latencies stand for the rest.
 *
 * <p>Under {@link FixedTiming} ({@link #fixed}) the cost model is replaced by per-request timelines: a request is admitted
 * whole (its prompt's blocks at once) while {@code max_num_seqs} and free blocks allow, its first token is due a sampled
 * TTFT later and each next token a sampled ITL after the one before; a step ends at the earliest token due and emits
 * the tokens due then. A request that arrived during the previous step, when a slot and its blocks were free all along,
 * has its clock started at its arrival, so the step boundaries of other requests never delay it. KV blocks, preemption,
 * prefix caching and the waiting queue work as above.
 *
 * <p>Prefill/decode disaggregation, as vLLM's scheduler runs a KV connector (NixlConnector) at
 * https://github.com/vllm-project/vllm/blob/9aaf83ef502fc37bc647f6e474314d48ba36cd1c/vllm/v1/core/sched/scheduler.py
 * ({@link #connectKvTransfer}):
 * <ul>
 *   <li>A {@link EngineRequest.Disaggregation#REMOTE_DECODE} request runs as any other; when it finishes (stop or
 *       length) its blocks are not freed but held ({@code request_finished} returns {@code delay_free_blocks}) until
 *       {@link #releaseKv}: the decode side's notification, or the lease's end.</li>
 *   <li>A {@link EngineRequest.Disaggregation#REMOTE_PREFILL} request, at the head of the waiting queue, takes its
 *       locally cached prefix ({@code get_computed_blocks}) and is told the rest of its prompt is external
 *       ({@code get_num_new_matched_tokens}: {@code len(prompt) - num_computed_tokens}, loaded asynchronously); blocks
 *       for the whole prompt are allocated ({@code allocate_slots}, or the loop stops as for any request) and it waits
 *       in {@code WAITING_FOR_REMOTE_KVS}, outside the running batch and the token budget, while the
 *       {@link KvTransferLink} carries its KV. Once it has arrived the request is cached and goes back to the front
 *       of the waiting queue ({@code skipped_waiting}, served first under FCFS) with every prompt token computed but the
 *       last ({@code _update_waiting_for_remote_kv}: "on a full prompt hit, we need to re-compute the last token"), so
 *       its first step computes one token at the prompt's context and samples its first output.</li>
 * </ul>
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
    // fixed timing only: the timing, its random stream, running requests by next token due, recent free room
    private final FixedTiming fixed;
    private final SplitMix64 latencyRandom;
    private final PriorityQueue<EngineRequest> due;
    private final FreeCapacityHistory freeRoom;
    // LoRA: residency (null when LoRA is off), the step's distinct adapter ids, waiting requests skipped for them
    private final LoraSlots loraSlots;
    private final int[] stepLoras;
    private int stepLoraCount;
    private final java.util.ArrayDeque<EngineRequest> skipped = new java.util.ArrayDeque<>();
    // disaggregation: the link KV is pulled over (null: no connector), who hears of arrivals, requests whose KV is
    // in transit (in the order their pulls began), held prefill requests
    private KvTransferLink kvLink;
    private double kvBytesPerToken;
    private long kvLinkFreeNanos;
    private KvTransferListener kvListener;
    private final java.util.ArrayList<EngineRequest> loading = new java.util.ArrayList<>();
    private int heldRequests;
    private long kvTransfers;
    private long kvTransferredTokens;
    private long kvExternalQueries;

    public EngineCore(Deployment deployment, KvCapacity capacity, CostModel costModel, SchedulingPolicy policy) {
        this(deployment, capacity, costModel, policy, null, 0);
        ConfigException.check(deployment.enableChunkedPrefill() || capacity.maxModelLen() <= deployment.maxNumBatchedTokens(),
                "--max-num-batched-tokens %d is below --max-model-len %d; with chunked prefill disabled every prompt must fit "
                        + "in one step", deployment.maxNumBatchedTokens(), capacity.maxModelLen());
    }

    /**
     * An engine timed by fixed latencies instead of a cost model; {@code seed} seeds its latency draws. The token budget
     * and chunked prefill play no part: each request runs on its own timeline.
     */
    public static EngineCore fixed(Deployment deployment, KvCapacity capacity, SchedulingPolicy policy, FixedTiming timing,
                                   long seed) {
        return new EngineCore(deployment, capacity, null, policy, java.util.Objects.requireNonNull(timing, "timing"), seed);
    }

    private EngineCore(Deployment deployment, KvCapacity capacity, CostModel costModel, SchedulingPolicy policy,
                       FixedTiming fixed, long seed) {
        this.deployment = deployment;
        this.capacity = capacity;
        this.costModel = costModel;
        this.policy = policy;
        this.kv = new KvCacheManager(capacity.numBlocks(), capacity.blockSize(), deployment.enablePrefixCaching(),
                deployment.enablePrefixCaching() ? new BlockHasher(deployment.prefixCachingHashAlgo(), deployment.hashSeed()) : null);
        this.waiting = policy.newWaitingQueue();
        this.running = new EngineRequest[deployment.maxNumSeqs()];
        this.plan = new StepPlan(deployment.maxNumSeqs());
        this.outcome = new StepOutcome(deployment.maxNumSeqs());
        this.fixed = fixed;
        this.latencyRandom = fixed == null ? null : new SplitMix64(seed);
        this.due = fixed == null ? null : new PriorityQueue<>(deployment.maxNumSeqs(), (a, b) -> Long.compare(a.dueNanos, b.dueNanos));
        this.freeRoom = fixed == null ? null : new FreeCapacityHistory();
        LoraConfig lora = deployment.lora();
        this.loraSlots = lora == null ? null : new LoraSlots(lora, deployment.model(), deployment.tensorParallelSize());
        this.stepLoras = new int[lora == null ? 0 : lora.maxLoras()];
    }

    /** An engine with the deployment's memory-derived KV capacity, the roofline cost model and FCFS scheduling. */
    public static EngineCore create(Deployment deployment) {
        return new EngineCore(deployment, KvCapacity.of(deployment), new RooflineCostModel(deployment),
                SchedulingPolicies.byName("fcfs"));
    }

    /**
     * Gives this engine a KV connector: remote-prefill requests pull their prompt's KV over {@code link}, and
     * {@code listener} hears when each no longer needs the prefill side's blocks (null: nobody). Not under fixed
     * timing, whose per-request latencies leave no step to pay a transfer in.
     */
    public void connectKvTransfer(KvTransferLink link, KvTransferListener listener) {
        ConfigException.check(fixed == null, "KV transfer (prefill/decode disaggregation) needs the engine's cost model, "
                + "not --timing fixed");
        kvLink = java.util.Objects.requireNonNull(link, "link");
        kvBytesPerToken = capacity.kvBytesPerTokenPerGpu();
        kvListener = listener;
    }

    /** The link remote-prefill requests pull their KV over; null without a KV connector. */
    public KvTransferLink kvTransferLink() { return kvLink; }

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
        if (r.lora() != null && loraSlots == null) {
            throw new IllegalArgumentException("LoRA is not enabled; " + r + " names adapter " + r.lora().name());
        }
        if (r.disaggregation() == EngineRequest.Disaggregation.REMOTE_PREFILL && kvLink == null) {
            throw new IllegalArgumentException("no KV connector: " + r + " asks to pull a remote prefill's KV");
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
                kvNoLongerNeeded(r, nowNanos);
                break;
            case LOADING:
                loading.remove(r);
                kv.free(r);
                kvNoLongerNeeded(r, nowNanos);
                break;
            case RUNNING:
                removeRunning(r);
                kv.free(r);
                if (fixed != null) {
                    due.remove(r);
                }
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
        receiveKv(nowNanos);
        long endNanos = 0;
        if (fixed != null) {
            endNanos = planFixedStep(nowNanos);
            if (endNanos < 0) {
                return null;
            }
        } else {
            int budget = scheduleRunning(deployment.maxNumBatchedTokens());
            collectRunningLoras();
            if (plan.preemptedCount() == 0) {
                scheduleWaiting(budget, nowNanos);
            }
            if (plan.size == 0) {
                return null;
            }
        }
        for (int i = 0; i < plan.size; i++) {
            EngineRequest r = plan.requests[i];
            int n = plan.newTokens[i];
            if (r.computedTokens >= r.promptTokens() && n == 1 && r.outputTokens > 0) {
                plan.shape.addDecode(r.computedTokens);
            } else {
                plan.shape.addPrefill(n, r.computedTokens, r.computedTokens + n >= r.totalTokens());
            }
            if (r.lora() != null) {
                plan.shape.addLoraTokens(n);
            }
        }
        if (fixed != null) {
            plan.durationNanos = endNanos - nowNanos;
        } else {
            plan.shape.loraAdapters(stepLoraCount);
            plan.loraLoadNanos = loadStepLoras();
            plan.durationNanos = Math.max(1, costModel.stepNanos(plan.shape)) + plan.loraLoadNanos;
        }
        stepInFlight = true;
        return plan;
    }

    /**
     * Fills the plan with the requests whose token is due first and returns when that is (never before now, never after
     * the lookahead), or -1 when nothing runs. As under the cost model, running requests get their blocks before waiting
     * ones are admitted, and nothing is admitted in a step that preempted.
     */
    private long planFixedStep(long nowNanos) {
        long end = fixedStepEnd(nowNanos);
        takeDue(end);
        collectRunningLoras();
        if (plan.preemptedCount() == 0 && admitFixed(nowNanos)) {
            long earlier = fixedStepEnd(nowNanos);
            if (earlier < end) { // a request just admitted is due before the others: end there, the others wait
                for (int i = 0; i < plan.size; i++) {
                    due.add(plan.requests[i]);
                }
                plan.clearRequests();
                end = earlier;
            }
            takeDue(end);
        }
        // a request still waiting now was refused room: nobody arriving after it may start before it
        freeRoom.record(nowNanos, waiting.size() > 0 ? 0 : running.length - runningCount, kv.freeBlocks());
        return runningCount == 0 ? -1 : end;
    }

    private long fixedStepEnd(long nowNanos) {
        EngineRequest first = due.peek();
        long end = nowNanos + fixed.lookaheadNanos();
        return first == null ? end : Math.max(nowNanos, Math.min(end, first.dueNanos));
    }

    /** Moves the requests due by {@code end} into the plan, each with its blocks (preempting when they run out). */
    private void takeDue(long end) {
        while (!due.isEmpty() && due.peek().dueNanos <= end) {
            EngineRequest r = due.poll();
            int tokens = r.totalTokens() - r.computedTokens;
            boolean preemptedSelf = false;
            while (!kv.allocateMore(r, tokens)) {
                int victimIndex = policy.chooseVictim(running, runningCount);
                EngineRequest victim = running[victimIndex];
                plan.removeIfPresent(victim);
                preempt(victimIndex);
                if (victim == r) {
                    preemptedSelf = true;
                    break;
                }
            }
            if (!preemptedSelf) {
                plan.add(r, tokens);
            }
        }
    }

    /**
     * Admits waiting requests whole while slots and blocks allow, each with its first token's due time; true if any was.
     * One that found room when it arrived, kept free for it from then on (after the room of those ahead of it), starts
     * its clock at its arrival: the step boundaries of other requests, and a driver that hands requests over late, do
     * not delay it.
     */
    private boolean admitFixed(long nowNanos) {
        int earlyAdmitted = 0;
        int earlyBlocks = 0;
        boolean early = true;
        boolean admitted = false;
        while (runningCount < running.length) {
            EngineRequest r = waiting.peek();
            if (r == null) {
                break;
            }
            if (skipForLora(r)) {
                continue;
            }
            int cachedBlocks = kv.findCachedBlocks(r);
            int cachedTokens = cachedBlocks * kv.blockSize();
            int tokens = r.totalTokens() - cachedTokens;
            int blocks = kv.blocksToAdmit(r, cachedBlocks, tokens);
            if (!kv.allocateNew(r, cachedBlocks, tokens)) {
                break;
            }
            long start = nowNanos;
            long arrival = Math.min(nowNanos, r.arrivalNanos());
            early = early && freeRoom.minSlotsSince(arrival) > earlyAdmitted
                    && freeRoom.minBlocksSince(arrival) >= earlyBlocks + blocks;
            if (early) { // else first come, first served: nobody behind it starts earlier either
                start = arrival;
                earlyAdmitted++;
                earlyBlocks += blocks;
            }
            admit(r, cachedTokens, start);
            double f = fixed.loadFactor(runningCount, running.length);
            r.dueNanos = start + drawNanos(fixed.firstTokenMs(tokens, f), fixed.timeToFirstTokenStdDevMs());
            due.add(r);
            admitted = true;
        }
        restoreSkipped();
        return admitted;
    }

    private long drawNanos(double meanMs, double stdDevMs) {
        return Math.round(TruncatedNormal.sample(latencyRandom, meanMs, stdDevMs) * 1e6);
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
                break;
            }
            if (skipForLora(r)) {
                continue;
            }
            if (r.kvPull == EngineRequest.KvPull.PENDING) {
                if (!startKvPull(r, nowNanos)) {
                    break;
                }
                continue;
            }
            if (r.kvPull == EngineRequest.KvPull.ARRIVED) {
                int tokens = Math.min(r.totalTokens() - r.computedTokens, budget);
                if (!kv.allocateMore(r, tokens)) {
                    break;
                }
                r.kvPull = EngineRequest.KvPull.DONE;
                waiting.poll();
                start(r, nowNanos);
                plan.add(r, tokens);
                budget -= tokens;
                continue;
            }
            int cachedBlocks = kv.findCachedBlocks(r);
            int cachedTokens = cachedBlocks * kv.blockSize();
            int tokens = r.totalTokens() - cachedTokens;
            if (!deployment.enableChunkedPrefill() && tokens > budget) {
                break;
            }
            tokens = Math.min(tokens, budget);
            if (!kv.allocateNew(r, cachedBlocks, tokens)) {
                break;
            }
            admit(r, cachedTokens, nowNanos);
            plan.add(r, tokens);
            budget -= tokens;
        }
        restoreSkipped();
    }

    /** Starts the step's adapter set (vLLM's {@code scheduled_loras}) from the adapters of the running batch. */
    private void collectRunningLoras() {
        stepLoraCount = 0;
        if (loraSlots != null) {
            for (int i = 0; i < runningCount; i++) {
                addStepLora(running[i].lora());
            }
        }
    }

    private void addStepLora(LoraAdapter a) {
        if (a != null && !isStepLora(a.id())) {
            stepLoras[stepLoraCount++] = a.id();
        }
    }

    private boolean isStepLora(int id) {
        for (int i = 0; i < stepLoraCount; i++) {
            if (stepLoras[i] == id) {
                return true;
            }
        }
        return false;
    }

    /** Takes the head of the waiting queue aside, and says so, when its adapter would be one more than the step allows. */
    private boolean skipForLora(EngineRequest r) {
        LoraAdapter a = r.lora();
        if (a == null || stepLoraCount < stepLoras.length || isStepLora(a.id())) {
            return false;
        }
        skipped.addLast(waiting.poll());
        return true;
    }

    /** Puts the skipped requests back at the head of the queue, in their order (vLLM prepends them). */
    private void restoreSkipped() {
        while (!skipped.isEmpty()) {
            waiting.addPreempted(skipped.pollLast());
        }
    }

    /** Makes every adapter of the step resident on the GPU; returns the load time that adds to the step. */
    private long loadStepLoras() {
        long nanos = 0;
        for (int i = 0; i < stepLoraCount; i++) {
            nanos += loraSlots.activate(stepLoras[i]);
        }
        return nanos;
    }

    /**
     * Moves the head of the waiting queue, whose blocks are allocated, into the running batch with its cached prefix
     * counted as computed. A request scheduled for the first time records when ({@code startNanos}) and its cache hit.
     */
    private void admit(EngineRequest r, int cachedTokens, long startNanos) {
        waiting.poll();
        kv.recordQuery(r.totalTokens(), cachedTokens);
        if (kvLink != null) { // vLLM asks the connector for every token not found locally
            kvExternalQueries += r.totalTokens() - cachedTokens;
        }
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
        if (loraSlots != null) {
            addStepLora(r.lora());
        }
    }

    /**
     * Starts pulling the head of the waiting queue's prompt KV: its cached prefix plus blocks for the rest of the prompt,
     * which the link brings; false (nothing changed) when the blocks do not fit. The request leaves the queue and waits
     * for its KV outside the running batch.
     */
    private boolean startKvPull(EngineRequest r, long nowNanos) {
        int cachedBlocks = kv.findCachedBlocks(r);
        int cachedTokens = cachedBlocks * kv.blockSize();
        int tokens = r.promptTokens() - cachedTokens;
        if (!kv.allocateNew(r, cachedBlocks, tokens)) {
            return false;
        }
        waiting.poll();
        kv.recordQuery(r.totalTokens(), cachedTokens);
        kvExternalQueries += r.totalTokens() - cachedTokens;
        r.cachedPromptTokens = cachedTokens;
        r.status = EngineRequest.Status.LOADING;
        r.kvPull = EngineRequest.KvPull.IN_FLIGHT;
        r.kvTransferTokens = tokens;
        r.kvTransferStartNanos = nowNanos;
        kvLinkFreeNanos = Math.max(kvLinkFreeNanos, nowNanos) + kvLink.wireNanos(tokens, kvBytesPerToken);
        r.kvTransferEndNanos = kvLinkFreeNanos + kvLink.latencyNanos();
        loading.add(r);
        kvTransfers++;
        kvTransferredTokens += tokens;
        return true;
    }

    /**
     * Moves every request whose KV has arrived by {@code nowNanos} back to the front of the waiting queue, in the order
     * their pulls began, with its prompt computed but the last token (which it recomputes to sample), its blocks cached.
     */
    private void receiveKv(long nowNanos) {
        for (int i = loading.size() - 1; i >= 0; i--) { // back to front, so the earliest pull ends up first in the queue
            EngineRequest r = loading.get(i);
            if (r.kvTransferEndNanos > nowNanos) {
                continue;
            }
            loading.remove(i);
            r.computedTokens = r.promptTokens();
            kv.cacheComputedBlocks(r);
            r.computedTokens = r.promptTokens() - 1;
            kvNoLongerNeeded(r, nowNanos);
            r.kvPull = EngineRequest.KvPull.ARRIVED;
            r.status = EngineRequest.Status.WAITING;
            waiting.addPreempted(r);
        }
    }

    /** Tells the listener the prefill side's blocks for this remote-prefill request may go, once. */
    private void kvNoLongerNeeded(EngineRequest r, long nowNanos) {
        if (kvListener != null && (r.kvPull == EngineRequest.KvPull.PENDING || r.kvPull == EngineRequest.KvPull.IN_FLIGHT)) {
            kvListener.remoteKvDone(r, nowNanos);
        }
    }

    /** When the earliest KV in transit arrives; {@code Long.MAX_VALUE} when none is. */
    public long nextKvArrivalNanos() {
        long next = Long.MAX_VALUE;
        for (int i = 0; i < loading.size(); i++) {
            next = Math.min(next, loading.get(i).kvTransferEndNanos);
        }
        return next;
    }

    /**
     * Frees the blocks a finished remote-decode request held for its decode engine (the decode side read them, or the
     * lease ran out); false when it held none.
     */
    public boolean releaseKv(EngineRequest r) {
        if (!r.kvHeld) {
            return false;
        }
        r.kvHeld = false;
        heldRequests--;
        kv.free(r);
        return true;
    }

    /**
     * Resets the prefix cache between steps, as vLLM's {@code Scheduler.reset_prefix_cache}: with
     * {@code preemptRunning}, every running request is first preempted by recompute (back to the front of the waiting
     * queue, in running order; each is told to {@code onPreempted}); without it the reset happens only when no request
     * holds KV blocks.
     *
     * @return whether the cache was reset
     */
    public boolean resetPrefixCache(boolean preemptRunning, java.util.function.Consumer<EngineRequest> onPreempted) {
        if (stepInFlight) {
            throw new IllegalStateException("resetPrefixCache called while a step is in flight");
        }
        while (preemptRunning && runningCount > 0) {
            EngineRequest victim = running[runningCount - 1];
            evict(runningCount - 1);
            onPreempted.accept(victim);
        }
        return kv.resetPrefixCache();
    }

    private void preempt(int index) {
        plan.recordPreempted(evict(index));
    }

    /** Frees a running request's blocks and queues it again to recompute from scratch. */
    private EngineRequest evict(int index) {
        EngineRequest victim = running[index];
        System.arraycopy(running, index + 1, running, index, runningCount - index - 1);
        running[--runningCount] = null;
        kv.keepForResume(victim);
        kv.free(victim);
        if (fixed != null) {
            due.remove(victim);
        }
        victim.computedTokens = 0;
        victim.preemptions++;
        victim.status = EngineRequest.Status.WAITING;
        waiting.addPreempted(victim);
        preemptions++;
        return victim;
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
        if (fixed != null) {
            scheduleNextTokens(end);
            // room freed by finished requests, which requests that arrived during the step may take from their arrival on
            freeRoom.record(end, running.length - runningCount, kv.freeBlocks());
        }
        return outcome;
    }

    /** Fixed timing: each request that got a token and runs on has its next one due an ITL later. */
    private void scheduleNextTokens(long end) {
        double f = fixed.loadFactor(runningCount, running.length);
        double meanMs = fixed.interTokenMs(f);
        for (int i = 0; i < outcome.tokenCount(); i++) {
            EngineRequest r = outcome.tokenRequest(i);
            if (r.status == EngineRequest.Status.RUNNING) {
                r.dueNanos = end + drawNanos(meanMs, fixed.interTokenLatencyStdDevMs());
                due.add(r);
            }
        }
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
    /** The step-time model; null under fixed timing. */
    public CostModel costModel() { return costModel; }
    /** The fixed latencies timing this engine, or null when its cost model does. */
    public FixedTiming fixedTiming() { return fixed; }
    public SchedulingPolicy policy() { return policy; }
    public KvCacheManager kvCache() { return kv; }
    public int runningCount() { return runningCount; }
    /** Running request {@code i}, for {@code i < runningCount()}: the scheduler's running list, in its order. */
    public EngineRequest running(int i) { return running[i]; }
    /** Requests waiting for admission, those waiting for their remote prefill's KV included (as vLLM counts them). */
    public int waitingCount() { return waiting.size() + loading.size(); }
    /** Nothing to schedule now or later: no request running, waiting or waiting for KV (held blocks are no work). */
    public boolean isIdle() { return runningCount == 0 && waiting.size() == 0 && loading.isEmpty(); }
    /** Remote-prefill requests whose KV is in transit. */
    public int kvLoadingCount() { return loading.size(); }
    /** Finished remote-decode requests still holding their KV blocks. */
    public int kvHeldCount() { return heldRequests; }
    /** KV pulls begun so far. */
    public long kvTransfers() { return kvTransfers; }
    /** Prompt tokens whose KV was pulled so far (vLLM's external prefix cache hits). */
    public long kvTransferredTokens() { return kvTransferredTokens; }
    /** With a KV connector, prompt tokens not found in the local prefix cache when admitted (vLLM's external queries). */
    public long kvExternalQueries() { return kvExternalQueries; }
    public long steps() { return steps; }
    public long preemptions() { return preemptions; }
    /** Prompt tokens actually computed (prefix-cache hits excluded, recomputation included). */
    public long promptTokensComputed() { return promptTokensComputed; }
    public long outputTokens() { return outputTokens; }
    public double kvCacheUsage() { return kv.usage(); }
    /** Adapter loads onto the GPU so far; 0 when LoRA is off. */
    public long loraLoads() { return loraSlots == null ? 0 : loraSlots.loads(); }
    /** Whether the adapter occupies a GPU slot now; false when LoRA is off. */
    public boolean isLoraOnGpu(int id) { return loraSlots != null && loraSlots.onGpu(id); }

    /**
     * Registers an adapter as vLLM's {@code add_lora} does (served from start or loaded at run time): read from storage
     * into the host cache now, so its first step pays only the copy to a GPU slot. Costs no step time (vLLM reads it
     * between steps).
     */
    public void registerLora(int id) {
        if (loraSlots != null) {
            loraSlots.preload(id);
        }
    }

    /** Forgets an adapter that was unloaded: it leaves its GPU slot and the host cache. */
    public void removeLora(int id) {
        if (loraSlots != null) {
            loraSlots.remove(id);
        }
    }
}
