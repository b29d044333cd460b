package dev.infersim.sim;

import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.StepOutcome;
import dev.infersim.engine.StepPlan;
import dev.infersim.result.ReplicaLatency;

/**
 * One engine replica in virtual time: its {@link EngineCore} and the step it is running, if any. The replica's next
 * event is that step's end. Planning is deferred ({@link #planIfReady}) until the driver has delivered every event at
 * the current instant, so requests arriving together share a step, as they would in a real engine loop.
 */
public final class Replica implements RoutingTarget {
    private final int id;
    private final EngineCore engine;
    private StepPlan inFlight;
    private long lastStepEndNanos = -1;
    private long peakWaiting;
    private double peakKvUsage;
    private final long createdNanos;
    private final long readyNanos;
    private boolean draining;
    private long retiredNanos = -1;
    /** Unfinished requests per LoRA adapter name (entries stay at 0 once used), and the adapters with any. */
    private final java.util.HashMap<String, int[]> adapterRequests = new java.util.HashMap<>();
    private int activeAdapters;
    /** The measured requests it served: how many, their TTFT and their queue time (send to first scheduled). */
    private final dev.infersim.result.LatencyStats ttft = new dev.infersim.result.LatencyStats();
    private final dev.infersim.result.LatencyStats queue = new dev.infersim.result.LatencyStats();

    /** A replica that serves from time 0. */
    public Replica(int id, EngineCore engine) {
        this(id, engine, 0, 0);
    }

    /**
     * @param createdNanos when the replica was started (it holds its GPUs from then on)
     * @param readyNanos   when its cold start ends and it takes requests
     */
    public Replica(int id, EngineCore engine, long createdNanos, long readyNanos) {
        if (readyNanos < createdNanos) {
            throw new IllegalArgumentException("ready at " + readyNanos + " ns, before its start at " + createdNanos);
        }
        this.id = id;
        this.engine = engine;
        this.createdNanos = createdNanos;
        this.readyNanos = readyNanos;
    }

    @Override
    public int id() { return id; }
    public EngineCore engine() { return engine; }

    /**
     * End of the step in flight; with none, when remote KV the engine waits for arrives (it may then start a step), or
     * {@code Long.MAX_VALUE}.
     */
    public long nextEventNanos() {
        return inFlight == null ? engine.nextKvArrivalNanos() : inFlight.endNanos();
    }

    /** The step in flight, or null. */
    public StepPlan stepInFlight() {
        return inFlight;
    }

    public void submit(EngineRequest r) {
        engine.submit(r);
        peakWaiting = Math.max(peakWaiting, engine.waitingCount());
        if (r.lora() != null && adapterRequests.computeIfAbsent(r.lora().name(), n -> new int[1])[0]++ == 0) {
            activeAdapters++;
        }
    }

    /**
     * Unfinished (waiting or running) requests here on the named LoRA adapter: what vLLM's
     * {@code vllm:lora_requests_info} lists an adapter for.
     */
    @Override
    public int requestsOnAdapter(String name) {
        int[] n = adapterRequests.get(name);
        return n == null ? 0 : n[0];
    }

    /** LoRA adapters with an unfinished request here. */
    @Override
    public int activeAdapters() {
        return activeAdapters;
    }

    /** Requests queued or running here: what a least-loaded router balances. */
    @Override
    public int load() {
        return engine.runningCount() + engine.waitingCount();
    }

    @Override
    public double kvCacheUsage() {
        return engine.kvCacheUsage();
    }

    @Override
    public int maxLoras() {
        return engine.deployment().lora() == null ? 0 : engine.deployment().lora().maxLoras();
    }

    @Override
    public int blockSize() {
        return engine.deployment().blockSize();
    }

    @Override
    public int vocabSize() {
        return engine.deployment().model().vocabSize();
    }

    /**
     * Starts the next step at {@code nowNanos} if none is in flight and the engine has work it can schedule.
     *
     * @return true if a step started, or the engine began pulling remote KV (its next event moved)
     */
    public boolean planIfReady(long nowNanos) {
        if (inFlight != null || engine.isIdle()) {
            return false;
        }
        long kvArrival = engine.nextKvArrivalNanos();
        inFlight = engine.planStep(nowNanos);
        if (inFlight == null) {
            return engine.nextKvArrivalNanos() != kvArrival;
        }
        peakKvUsage = Math.max(peakKvUsage, engine.kvCacheUsage());
        return true;
    }

    /** Completes the step in flight at its end time; the outcome is valid until the next completion. */
    public StepOutcome completeStep() {
        StepPlan plan = inFlight;
        inFlight = null;
        lastStepEndNanos = plan.endNanos();
        StepOutcome out = engine.completeStep(plan);
        for (int i = 0, n = out.finishedCount(); i < n; i++) {
            EngineRequest r = out.finished(i);
            if (r.lora() != null && --adapterRequests.get(r.lora().name())[0] == 0) {
                activeAdapters--;
            }
        }
        return out;
    }

    /** End of the last completed step; -1 before the first. */
    public long lastStepEndNanos() {
        return lastStepEndNanos;
    }

    public long createdNanos() { return createdNanos; }
    public long readyNanos() { return readyNanos; }

    /** Whether the cold start is over at {@code nowNanos}. */
    public boolean isReady(long nowNanos) {
        return nowNanos >= readyNanos;
    }

    /** Draining: takes no new requests, finishes those it has, then is retired. */
    public boolean isDraining() { return draining; }

    void drain() {
        draining = true;
    }

    /** When the replica stopped holding its GPUs; -1 while it lives. */
    public long retiredNanos() { return retiredNanos; }

    void retire(long nowNanos) {
        retiredNanos = nowNanos;
    }

    /** Counts a measured request it served, with its TTFT and queue time. */
    void served(long ttftNanos, long queueNanos) {
        ttft.record(ttftNanos);
        queue.record(queueNanos);
    }

    /** The measured requests it served, with their mean and p99 TTFT and mean queue time. */
    ReplicaLatency servedSummary() {
        return new ReplicaLatency(ttft.count(), ttft.count() == 0 ? null : ttft.meanMs(),
                ttft.count() == 0 ? null : ttft.percentileMs(99), queue.count() == 0 ? null : queue.meanMs());
    }

    /** Most requests ever waiting in this engine's queue. */
    public long peakWaiting() { return peakWaiting; }
    /** Highest KV-cache usage at the start of any step (after its blocks were allocated). */
    public double peakKvUsage() { return peakKvUsage; }
}
