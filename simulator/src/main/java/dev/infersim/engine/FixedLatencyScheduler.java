package dev.infersim.engine;

import dev.infersim.common.SplitMix64;

import java.util.PriorityQueue;

/**
 * The fixed-latency engine's scheduler ({@link FixedTiming}): vLLM's cost-model batch replaced by per-request
 * timelines. A request is admitted whole (its prompt's blocks at once; the token budget and chunked prefill play no part)
 * while {@code max_num_seqs} and free blocks allow, its first token is due a sampled TTFT later and each next token a
 * sampled ITL after the one before; a step ends at the earliest token due and emits the tokens due then. A request that
 * arrived during the previous step, when a slot and its blocks were free all along, has its clock started at its
 * arrival, so the step boundaries of other requests never delay it. KV blocks, preemption, prefix caching and the
 * waiting queue work as under vLLM's policy ({@link BatchState}); of LoRA only the adapter limit applies: the fixed
 * latencies stand for the rest. It is its own {@link StepTiming}: a step lasts until the first token due, which its
 * timelines decide.
 */
final class FixedLatencyScheduler implements Scheduler, StepTiming, BatchState.Admission {
    private final BatchState state;
    private FixedTiming timing;
    private double scale = 1;
    private final SplitMix64 random;
    /** Running requests by when their next token is due. */
    private final PriorityQueue<EngineRequest> due;
    /** Recent free slots and blocks, for requests handed over after they arrived. */
    private final FreeCapacityHistory freeRoom = new FreeCapacityHistory();
    private long stepEndNanos;
    // the admission pass under way: whether each request admitted so far started at its arrival, how many, their blocks
    private boolean early;
    private int earlyAdmitted;
    private int earlyBlocks;

    /** {@code seed} seeds the latency draws. */
    FixedLatencyScheduler(Deployment deployment, KvCapacity capacity, SchedulingPolicy policy, FixedTiming timing,
                          long seed) {
        this.timing = timing;
        this.random = new SplitMix64(seed);
        this.due = new PriorityQueue<>(deployment.maxNumSeqs(), (a, b) -> Long.compare(a.dueNanos, b.dueNanos));
        this.state = new BatchState(deployment, capacity, policy, this);
    }

    /**
     * Fills the plan with the requests whose token is due first, ending the step when that is (never before now, never
     * after the lookahead). As under the cost model, running requests get their blocks before waiting ones are
     * admitted, and nothing is admitted in a step that preempted; a request just admitted whose first token is due
     * before the others ends the step there, the others waiting.
     */
    @Override
    public boolean schedule(long nowNanos) {
        BatchState s = state;
        long end = stepEnd(nowNanos);
        takeDue(s, end);
        early = true;
        earlyAdmitted = 0;
        earlyBlocks = 0;
        if (s.admitWaiting(nowNanos, Long.MAX_VALUE)) {
            long earlier = stepEnd(nowNanos);
            if (earlier < end) {
                StepPlan plan = s.plan;
                for (int i = 0; i < plan.size; i++) {
                    due.add(plan.requests[i]);
                }
                plan.clearRequests();
                end = earlier;
            }
            takeDue(s, end);
        }
        // a request still waiting now was refused room: nobody arriving after it may start before it
        freeRoom.record(nowNanos, s.waiting.size() > 0 ? 0 : s.maxNumSeqs() - s.runningCount(), s.kv.freeBlocks());
        stepEndNanos = end;
        return s.runningCount() > 0;
    }

    private long stepEnd(long nowNanos) {
        EngineRequest first = due.peek();
        long end = nowNanos + timing.lookaheadNanos();
        return first == null ? end : Math.max(nowNanos, Math.min(end, first.dueNanos));
    }

    /** Moves the requests due by {@code end} into the plan, each with its blocks (preempting when they run out). */
    private void takeDue(BatchState s, long end) {
        while (!due.isEmpty() && due.peek().dueNanos <= end) {
            EngineRequest r = due.poll();
            int tokens = r.totalTokens() - r.computedTokens;
            if (s.allocateOrPreempt(r, tokens) >= 0) {
                s.plan.add(r, tokens);
            }
        }
    }

    /**
     * A request that found room when it arrived, kept free for it from then on (after the room of those admitted ahead
     * of it in this pass), starts its clock at its arrival: the step boundaries of other requests, and a driver that
     * hands requests over late, do not delay it. Otherwise it starts now, and so does everyone behind it (first come,
     * first served).
     */
    @Override
    public long clockStart(EngineRequest r, int blocks, long nowNanos) {
        long arrival = Math.min(nowNanos, r.arrivalNanos());
        early = early && freeRoom.minSlotsSince(arrival) > earlyAdmitted
                && freeRoom.minBlocksSince(arrival) >= earlyBlocks + blocks;
        if (!early) {
            return nowNanos;
        }
        earlyAdmitted++;
        earlyBlocks += blocks;
        return arrival;
    }

    /** Its first token is due a TTFT after its clock started, drawn at the load it joins. */
    @Override
    public void admitted(EngineRequest r, int tokens, long startNanos) {
        double f = timing.loadFactor(state.runningCount(), state.maxNumSeqs());
        r.dueNanos = startNanos + drawNanos(timing.firstTokenMs(tokens, f), timing.timeToFirstTokenStdDevMs());
        due.add(r);
    }

    @Override
    public long stepNanos(StepPlan plan) {
        return stepEndNanos - plan.startNanos();
    }

    /**
     * Applies the step ({@link BatchState#updateFromOutput}); then each request that got a token and runs on has its next
     * one due an ITL later, and the room finished requests freed is recorded, for requests that arrived during the step
     * to take from their arrival on.
     */
    @Override
    public StepOutcome updateFromOutput(StepPlan step) {
        BatchState s = state;
        StepOutcome outcome = s.updateFromOutput(step);
        long end = outcome.endNanos();
        double meanMs = timing.interTokenMs(timing.loadFactor(s.runningCount(), s.maxNumSeqs()));
        for (int i = 0; i < outcome.tokenCount(); i++) {
            EngineRequest r = outcome.tokenRequest(i);
            if (r.status == EngineRequest.Status.RUNNING) {
                r.dueNanos = end + drawNanos(meanMs, timing.interTokenLatencyStdDevMs());
                due.add(r);
            }
        }
        freeRoom.record(end, s.maxNumSeqs() - s.runningCount(), s.kv.freeBlocks());
        return outcome;
    }

    @Override
    public BatchState state() {
        return state;
    }

    @Override
    public void dropped(EngineRequest r) {
        due.remove(r);
    }

    private long drawNanos(double meanMs, double stdDevMs) {
        return Math.round(TruncatedNormal.sample(random, meanMs * scale, stdDevMs * scale) * 1e6);
    }

    @Override
    public void latencyScale(double scale) {
        this.scale = scale;
    }

    /** Latencies drawn from now on come from {@code timing}; tokens already due keep their times. */
    void timing(FixedTiming timing) {
        this.timing = timing;
    }
}
