package dev.infersim.engine;

import dev.infersim.common.ConfigException;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * One serving engine's core loop, as vLLM V1 runs it, with time passed in by the caller so a virtual clock (the
 * simulator), the wall clock (the mock server) or a test can drive it:
 * <pre>
 *   plan = engine.planStep(now);          // null when idle
 *   ... wait until plan.endNanos() ...
 *   outcome = engine.completeStep(plan);  // tokens and finished requests
 * </pre>
 * As vLLM's {@code EngineCore.step} does with its scheduler, {@code planStep} has the {@link Scheduler} decide the
 * batch ({@code schedule()}) and {@code completeStep} has it apply the step's results ({@code update_from_output()});
 * between the two, the engine's {@link StepTiming} prices the planned batch. The scheduler is vLLM V1's
 * ({@link VllmScheduler}: budget, chunked prefill and preemption statement by statement; in V0's multi-step rounds
 * with {@code --num-scheduler-steps}, {@link MultiStepScheduler}), its steps priced by a
 * {@link CostModel} ({@link CostModelTiming}), or fixed latencies' ({@link FixedLatencyScheduler}: per-request timelines
 * drawn from a {@link FixedTiming}, a step lasting until the first token due). Both share the running batch, the waiting
 * queue, the paged KV cache with prefix caching, preemption by recompute and one admission of waiting requests
 * ({@link BatchState#admitWaiting}).
 *
 * <p>LoRA (vLLM V1's rule): a step's batch runs on at most {@code max_loras} distinct adapters ({@link StepLoras});
 * under the cost model each adapter not in a GPU slot is loaded before the step runs, which lengthens it. Under
 * {@link FixedTiming} only the adapter limit applies: the fixed latencies stand for the rest.
 *
 * <p>Prefill/decode disaggregation, as vLLM's scheduler runs a KV connector (NixlConnector) at
 * https://github.com/vllm-project/vllm/blob/9aaf83ef502fc37bc647f6e474314d48ba36cd1c/vllm/v1/core/sched/state.py
 * ({@link #connectKvTransfer}): a {@link EngineRequest.Disaggregation#REMOTE_DECODE} request runs as any other and,
 * finished, holds its blocks ({@code delay_free_blocks}) until {@link #releaseKv}
 * ({@link BatchState#updateFromOutput}); a {@link EngineRequest.Disaggregation#REMOTE_PREFILL} request pulls its
 * prompt's KV over the {@link KvTransferLink} in {@code WAITING_FOR_REMOTE_KVS}, outside the running batch, then
 * computes its prompt's last token and samples ({@link KvConnector}).
 *
 * <p>Not thread-safe: one thread owns an engine. Steady-state steps allocate nothing.
 */
public final class EngineCore {
    private final Deployment deployment;
    private final KvCapacity capacity;
    private final SchedulingPolicy policy;
    private final Scheduler scheduler;
    private final StepTiming timing;
    /** The scheduler's state: its running batch, waiting queue, KV cache, the step being planned. */
    private final BatchState state;
    private boolean stepInFlight;

    /**
     * An engine whose steps last what {@code costModel} (the GPU's work) prices their batch at, with the host time of the
     * deployment's engine version added or overlapped ({@link EngineVersion#hostTime}): the step's duration as the
     * engine plans it, the same for the simulator's clock and the mock's.
     */
    public EngineCore(Deployment deployment, KvCapacity capacity, CostModel costModel, SchedulingPolicy policy) {
        this(deployment, capacity, costModel, deployment.engine().hostTime(), policy);
    }

    /**
     * As above with {@code hostTime} in place of the engine version's: how a candidate host time is tried against
     * published runs (bench/fidelity/fit-v0.jsh).
     */
    public EngineCore(Deployment deployment, KvCapacity capacity, CostModel costModel, HostTime hostTime,
                      SchedulingPolicy policy) {
        this(deployment, capacity, policy, scheduler(deployment, capacity, policy), new CostModelTiming(costModel, hostTime));
        ConfigException.check(deployment.enableChunkedPrefill() || capacity.maxModelLen() <= deployment.maxNumBatchedTokens(),
                "--max-num-batched-tokens %d is below --max-model-len %d; with chunked prefill disabled every prompt must fit "
                        + "in one step", deployment.maxNumBatchedTokens(), capacity.maxModelLen());
    }

    /** vLLM's scheduler, in multi-step rounds when the deployment asks for them ({@code --num-scheduler-steps}). */
    private static Scheduler scheduler(Deployment deployment, KvCapacity capacity, SchedulingPolicy policy) {
        VllmScheduler single = new VllmScheduler(deployment, capacity, policy);
        return deployment.numSchedulerSteps() == 1 ? single : new MultiStepScheduler(single, deployment.numSchedulerSteps());
    }

    /**
     * An engine timed by fixed latencies instead of a cost model; {@code seed} seeds its latency draws. The token budget
     * and chunked prefill play no part: each request runs on its own timeline.
     */
    public static EngineCore fixed(Deployment deployment, KvCapacity capacity, SchedulingPolicy policy, FixedTiming timing,
                                   long seed) {
        ConfigException.check(deployment.numSchedulerSteps() == 1, "--num-scheduler-steps %d needs the engine's cost "
                + "model, not --timing fixed, whose requests run on timelines of their own", deployment.numSchedulerSteps());
        FixedLatencyScheduler scheduler = new FixedLatencyScheduler(deployment, capacity, policy,
                Objects.requireNonNull(timing, "timing"), seed);
        return new EngineCore(deployment, capacity, policy, scheduler, scheduler);
    }

    private EngineCore(Deployment deployment, KvCapacity capacity, SchedulingPolicy policy, Scheduler scheduler,
                       StepTiming timing) {
        this.deployment = deployment;
        this.capacity = capacity;
        this.policy = policy;
        this.scheduler = scheduler;
        this.timing = timing;
        this.state = scheduler.state();
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
        ConfigException.check(timing instanceof CostModelTiming, "KV transfer (prefill/decode disaggregation) needs the "
                + "engine's cost model, not --timing fixed");
        state.connector.connect(link, capacity.kvBytesPerTokenPerGpu(), listener);
    }

    /**
     * From the next step on, this engine's GPU runs {@code speedFactor} times as fast as its profile (0.5: every step,
     * or every fixed latency drawn, takes twice as long); what is already planned or due keeps its time.
     */
    public void setSpeedFactor(double speedFactor) {
        ConfigException.check(speedFactor > 0 && Double.isFinite(speedFactor), "speed factor must be > 0, got %s", speedFactor);
        timing.latencyScale(1 / speedFactor);
    }

    /** Whether this engine is timed by fixed latencies ({@link #fixed}) rather than a cost model. */
    public boolean fixedTiming() {
        return scheduler instanceof FixedLatencyScheduler;
    }

    /**
     * From now on, latencies are drawn from {@code fixed}: a fixed-latency engine's {@link FixedTiming} changed at run
     * time; tokens already due keep their times. A cost-model engine has none to change.
     */
    public void setFixedTiming(FixedTiming fixed) {
        if (!(scheduler instanceof FixedLatencyScheduler f)) {
            throw new IllegalStateException("this engine is timed by its cost model, not fixed latencies");
        }
        f.timing(Objects.requireNonNull(fixed, "fixed"));
    }

    /** The link remote-prefill requests pull their KV over; null without a KV connector. */
    public KvTransferLink kvTransferLink() { return state.connector.link(); }

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
        if (r.lora() != null && state.loras.slots() == null) {
            throw new IllegalArgumentException("LoRA is not enabled; " + r + " names adapter " + r.lora().name());
        }
        if (r.disaggregation() == EngineRequest.Disaggregation.REMOTE_PREFILL && kvTransferLink() == null) {
            throw new IllegalArgumentException("no KV connector: " + r + " asks to pull a remote prefill's KV");
        }
        r.outputLimit = Math.min(r.maxTokens(), capacity.maxModelLen() - r.promptTokens());
        r.status = EngineRequest.Status.WAITING;
        state.waiting.add(r);
    }

    /**
     * Stops a request now, waiting or running, and frees its blocks. If it is part of the step in flight, that step's
     * completion skips it. Aborting a finished request does nothing.
     *
     * @return false if the request had already finished
     */
    public boolean abort(EngineRequest r, FinishReason reason, long nowNanos) {
        return state.abort(r, reason, nowNanos);
    }

    /**
     * Decides the next iteration at {@code nowNanos}. Returns null when there is nothing to run (the caller sleeps until
     * the next submit). Call {@link #completeStep} before planning again.
     */
    public StepPlan planStep(long nowNanos) {
        if (stepInFlight) {
            throw new IllegalStateException("planStep called before completeStep of the previous step");
        }
        StepPlan plan = state.plan;
        plan.reset(nowNanos);
        state.connector.receive(nowNanos);
        if (!scheduler.schedule(nowNanos)) {
            return null;
        }
        plan.describeShape();
        plan.durationNanos = timing.stepNanos(plan);
        stepInFlight = true;
        return plan;
    }

    /**
     * Applies a planned step at its end time: advances every request's computed tokens, samples one token for each
     * request whose prompt (or recompute) is done, finishes requests that hit EOS or their length limit, frees their blocks.
     */
    public StepOutcome completeStep(StepPlan step) {
        if (step != state.plan || !stepInFlight) {
            throw new IllegalStateException("completeStep needs the plan returned by the last planStep");
        }
        stepInFlight = false;
        return scheduler.updateFromOutput(step);
    }

    /** When the earliest KV in transit arrives; {@code Long.MAX_VALUE} when none is. */
    public long nextKvArrivalNanos() { return state.connector.nextArrivalNanos(); }

    /**
     * Frees the blocks a finished remote-decode request held for its decode engine (the decode side read them, or the
     * lease ran out); false when it held none.
     */
    public boolean releaseKv(EngineRequest r) { return state.releaseKv(r); }

    /**
     * Resets the prefix cache between steps, as vLLM's {@code Scheduler.reset_prefix_cache}: with
     * {@code preemptRunning}, every running request is first preempted by recompute (back to the front of the waiting
     * queue, in running order; each is told to {@code onPreempted}); without it the reset happens only when no request
     * holds KV blocks.
     *
     * @return whether the cache was reset
     */
    public boolean resetPrefixCache(boolean preemptRunning, Consumer<EngineRequest> onPreempted) {
        if (stepInFlight) {
            throw new IllegalStateException("resetPrefixCache called while a step is in flight");
        }
        if (preemptRunning) {
            state.preemptAll(onPreempted);
        }
        return state.kv.resetPrefixCache();
    }

    public Deployment deployment() { return deployment; }
    public KvCapacity capacity() { return capacity; }
    public SchedulingPolicy policy() { return policy; }
    public KvCacheManager kvCache() { return state.kv; }
    public int runningCount() { return state.runningCount(); }
    /** Running request {@code i}, for {@code i < runningCount()}: the scheduler's running list, in its order. */
    public EngineRequest running(int i) { return state.running(i); }
    /** Requests waiting for admission, those waiting for their remote prefill's KV included (as vLLM counts them). */
    public int waitingCount() { return state.waiting.size() + state.connector.loadingCount(); }
    /** Nothing to schedule now or later: no request running, waiting or waiting for KV (held blocks are no work). */
    public boolean isIdle() {
        return state.runningCount() == 0 && state.waiting.size() == 0 && state.connector.loadingCount() == 0;
    }
    /** Remote-prefill requests whose KV is in transit. */
    public int kvLoadingCount() { return state.connector.loadingCount(); }
    /** Finished remote-decode requests still holding their KV blocks. */
    public int kvHeldCount() { return state.heldCount(); }
    /** KV pulls begun so far. */
    public long kvTransfers() { return state.connector.transfers(); }
    /** Prompt tokens whose KV was pulled so far (vLLM's external prefix cache hits). */
    public long kvTransferredTokens() { return state.connector.transferredTokens(); }
    /** With a KV connector, prompt tokens not found in the local prefix cache when admitted (vLLM's external queries). */
    public long kvExternalQueries() { return state.connector.externalQueries(); }
    public long steps() { return state.steps(); }
    public long preemptions() { return state.preemptions(); }
    /** Prompt tokens actually computed (prefix-cache hits excluded, recomputation included). */
    public long promptTokensComputed() { return state.promptTokensComputed(); }
    public long outputTokens() { return state.outputTokens(); }
    public double kvCacheUsage() { return state.kv.usage(); }
    /** Adapter loads onto the GPU so far; 0 when LoRA is off. */
    public long loraLoads() { return loraSlots() == null ? 0 : loraSlots().loads(); }
    /** Whether the adapter occupies a GPU slot now; false when LoRA is off. */
    public boolean isLoraOnGpu(int id) { return loraSlots() != null && loraSlots().onGpu(id); }

    /**
     * Registers an adapter as vLLM's {@code add_lora} does (served from start or loaded at run time): read from storage
     * into the host cache now, so its first step pays only the copy to a GPU slot. Costs no step time (vLLM reads it
     * between steps).
     */
    public void registerLora(int id) {
        if (loraSlots() != null) {
            loraSlots().preload(id);
        }
    }

    /** Forgets an adapter that was unloaded: it leaves its GPU slot and the host cache. */
    public void removeLora(int id) {
        if (loraSlots() != null) {
            loraSlots().remove(id);
        }
    }

    private LoraSlots loraSlots() { return state.loras.slots(); }
}
