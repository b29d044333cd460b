package dev.infersim.sim;

import dev.infersim.result.LatencySeries;
import dev.infersim.result.RequestRecord;
import dev.infersim.result.ServingStats;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.LoraAdapter;
import dev.infersim.engine.StepOutcome;
import dev.infersim.engine.StepPlan;
import dev.infersim.workload.arrival.LoadPattern;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;

/**
 * Discrete-event simulation of replicas serving a workload in virtual time. Three kinds of event exist: a request
 * arrival (the next one in the workload stream, delivered at its scheduled time, or when a concurrency slot frees
 * under {@code --max-concurrency}), a step completion (the earliest end of a replica's step in flight) and, for an
 * autoscaled {@link Fleet}, a fleet event (a cold start ending, a metrics scrape, an autoscaler sync). The loop
 * handles the earliest event; fleet events win ties (a replica ready at t takes the request arriving at t), then
 * arrivals, so a request arriving as a step ends joins the next step. Replicas
 * plan their next step only when the clock is about to move on, so everything that happens at one instant (a burst,
 * a closed-loop user sending again as its previous request finishes) shares the step that starts there.
 *
 * <p>Measured as a client would ({@code vllm bench serve}): latencies run from the send time, TTFT to the end of the
 * step that sampled the first token, ITL between successive token steps, E2EL to the last token. The engine's ground
 * truth adds queue time (send to first scheduled), prefill time (first scheduled to first token), cached prompt tokens
 * and preemptions. With one request per step and one token per request the model is a FCFS single-server queue, which
 * the tests check against M/M/1 and M/D/1.
 *
 * <p>A {@link DisaggregatedFleet} serves each request in two parts: the prefill pool's router picks the replica that
 * prefills it (one token, held blocks), then the decode pool's router the replica that pulls its KV and generates what
 * the client receives. TTFT runs from the send to that replica's first token; the ground truth's queue time is the
 * prefill replica's, its prefill time everything from the prefill's start to that first token (prefill, hand-off, KV
 * pull and the decode replica's first step).
 *
 * <p>The per-token and per-step path allocates nothing; per request, one small state object. Replicas are scanned
 * linearly for the earliest step end, which beats a heap for the handful of replicas one fleet has.
 */
public final class Simulation {
    private final Fleet fleet;
    private final Router router;
    /** The two pools of a disaggregated fleet; null for an aggregated one. */
    private final DisaggregatedFleet pd;
    private final SimulationOptions options;
    private final RequestLogWriter detail;
    private final int vocabSize;
    private final Timeline timeline;
    private final LatencySeries latencySeries;
    private final ArrayDeque<WorkloadRequest> clientQueue = new ArrayDeque<>();
    private final java.util.Map<String, LoraAdapter> adapters = new java.util.HashMap<>();

    private Iterator<WorkloadRequest> source;
    private WorkloadRequest next;
    private int maxConcurrency;
    private boolean closedLoop;
    private long clock;
    private int inFlight;
    private long arrived;
    private long finished;
    private long sent;
    private ServingStats stats;
    private long windowStartNanos = -1;
    private long windowEndNanos = -1;
    private long lastSendNanos = -1;
    private long firstArrivalNanos = -1;
    private long lastArrivalNanos;
    private double requestNanosInSystem;
    private long firstSendNanos = -1;
    private double sumSojournNanos;
    private volatile boolean stopRequested;
    private boolean stopped;

    /**
     * @param replicas the engines, each used by this simulation only
     * @param router   picks a replica per request
     * @param options  warmup, SLO, timelines
     * @param detail   per-request JSONL sink, or null
     */
    public Simulation(Replica[] replicas, Router router, SimulationOptions options, RequestLogWriter detail) {
        this(Fleet.fixed(replicas.clone()), router, options, detail);
    }

    /**
     * @param fleet   the replicas over time, fixed or autoscaled; used by this simulation only
     * @param router  picks a replica per request among those taking requests
     * @param options warmup, SLO, timelines
     * @param detail  per-request JSONL sink, or null
     */
    public Simulation(Fleet fleet, Router router, SimulationOptions options, RequestLogWriter detail) {
        this(fleet, router, null, options, detail);
    }

    /**
     * @param pd      a prefill pool and a decode pool, each with its router; used by this simulation only
     * @param options warmup, SLO, timelines
     * @param detail  per-request JSONL sink, or null
     */
    public Simulation(DisaggregatedFleet pd, SimulationOptions options, RequestLogWriter detail) {
        this(pd.fleet(), null, pd, options, detail);
    }

    private Simulation(Fleet fleet, Router router, DisaggregatedFleet pd, SimulationOptions options, RequestLogWriter detail) {
        this.fleet = fleet;
        this.router = router;
        this.pd = pd;
        this.options = options;
        this.detail = detail;
        this.vocabSize = fleet.live()[0].engine().deployment().model().vocabSize();
        this.timeline = new Timeline(0, options.timelineIntervalNanos(), options.timelinePoints());
        this.latencySeries = new LatencySeries(options.slo(), 1_000_000_000L, 512);
    }

    /** A single replica: the common case. */
    public static Simulation single(EngineCore engine, SimulationOptions options, RequestLogWriter detail) {
        return new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(), options, detail);
    }

    /** Runs the whole workload to its last completion. Call once per instance. */
    public SimulationResult run(Workload workload) {
        if (source != null) {
            throw new IllegalStateException("a Simulation runs once");
        }
        LoadPattern load = workload.load();
        maxConcurrency = load.maxConcurrency();
        closedLoop = workload.isClosedLoop();
        source = workload.iterator();
        next = source.hasNext() ? source.next() : null;
        while (true) {
            if (stopRequested && (next != null || !clientQueue.isEmpty())) {
                next = null;
                clientQueue.clear(); // arrived but never sent: a stopped client sends nothing more
                stopped = true;
            }
            long arrival = nextArrivalNanos();
            Replica stepping = earliestStep();
            // an idle replica's remote KV may have arrived while another step ran: it plans now, never in the past
            long stepEnd = stepping == null ? Long.MAX_VALUE : Math.max(clock, stepping.nextEventNanos());
            long t = Math.min(arrival, stepEnd);
            // Fleet events (cold starts ending, scrapes, autoscaler syncs) happen only while requests remain.
            long fleetAt = t == Long.MAX_VALUE ? Long.MAX_VALUE : fleet.nextEventNanos();
            boolean fleetEvent = fleetAt <= t;
            if (fleetEvent) {
                t = fleetAt;
            }
            if (t > clock && planReadyReplicas()) {
                continue; // a new step may end before t
            }
            if (t == Long.MAX_VALUE) {
                break;
            }
            advanceTo(t);
            if (fleetEvent) {
                fleet.handleEvents(t);
            } else if (arrival <= stepEnd) {
                handleArrival();
            } else if (stepping.stepInFlight() == null) {
                stepping.planIfReady(t); // an idle engine's remote KV arrived: it starts the request's step now
            } else {
                handleStepEnd(stepping);
            }
        }
        sampleThrough(clock);
        checkDrained();
        return result();
    }

    /**
     * Sends no more requests; the run still ends normally, with every request already sent served in virtual time, so
     * an interrupted command reports what was sent. Safe to call from another thread (a shutdown hook).
     */
    public void stop() {
        stopRequested = true;
    }

    private long nextArrivalNanos() {
        if (next == null) {
            return Long.MAX_VALUE;
        }
        if (closedLoop) {
            return inFlight < maxConcurrency ? clock : Long.MAX_VALUE;
        }
        return Math.max(next.arrivalNanos(), clock);
    }

    private Replica earliestStep() {
        Replica best = null;
        long bestEnd = Long.MAX_VALUE;
        for (Replica r : fleet.live()) {
            long end = r.nextEventNanos();
            if (end < bestEnd) {
                best = r;
                bestEnd = end;
            }
        }
        return best;
    }

    private boolean planReadyReplicas() {
        boolean planned = false;
        for (Replica r : fleet.live()) {
            planned |= r.planIfReady(clock);
        }
        return planned;
    }

    private void advanceTo(long t) {
        if (t < clock) {
            throw new IllegalStateException("virtual time would go back from " + clock + " to " + t + " ns");
        }
        sampleThrough(t - 1);
        if (firstSendNanos >= 0) {
            requestNanosInSystem += (double) inFlight * (t - clock);
        }
        clock = t;
    }

    /** Takes every timeline sample due at or before {@code nanos}, with the state in force since {@link #clock}. */
    private void sampleThrough(long nanos) {
        if (timeline.nextSampleNanos() > nanos) {
            return;
        }
        int running = 0;
        int waiting = 0;
        int batchSize = 0;
        long batchTokens = 0;
        long stepNanos = 0;
        int stepping = 0;
        double kv = 0;
        Replica[] replicas = fleet.live();
        for (Replica r : replicas) {
            EngineCore e = r.engine();
            running += e.runningCount();
            waiting += e.waitingCount();
            kv += e.kvCacheUsage();
            StepPlan step = r.stepInFlight();
            if (step != null) {
                batchSize += step.size();
                batchTokens += step.tokens();
                stepNanos += step.durationNanos();
                stepping++;
            }
        }
        int backlog = (int) (arrived - finished);
        while (timeline.nextSampleNanos() <= nanos) {
            timeline.sample(arrived, running, waiting, backlog, kv / replicas.length, batchSize, batchTokens,
                    stepping == 0 ? 0 : stepNanos / stepping);
        }
    }

    private void handleArrival() {
        WorkloadRequest w = next;
        next = source.hasNext() ? source.next() : null;
        if (firstArrivalNanos < 0) {
            firstArrivalNanos = w.arrivalNanos();
        }
        lastArrivalNanos = w.arrivalNanos();
        arrived++;
        if (maxConcurrency > 0 && inFlight >= maxConcurrency) {
            clientQueue.add(w);
        } else {
            send(w);
        }
    }

    private void send(WorkloadRequest w) {
        RequestState s = new RequestState(w, clock, w.index() >= options.numWarmups() && clock >= options.warmupDurationNanos(),
                detail != null && detail.chunkGaps());
        inFlight++;
        sent++;
        lastSendNanos = clock;
        if (firstSendNanos < 0) {
            firstSendNanos = clock;
        }
        if (s.measured && stats == null) {
            windowStartNanos = clock;
            stats = new ServingStats(options.slo(), clock);
        }
        Replica replica;
        if (pd != null) {
            replica = pd.routePrefill(s);
        } else {
            Replica[] routable = fleet.routable();
            replica = routable[router.route(s, routable)];
        }
        s.replica = replica;
        EngineCore engine = replica.engine();
        String rejection = engine.rejectionReason(w.promptTokens());
        if (rejection != null) {
            complete(s, null, rejection);
            return;
        }
        if (pd != null) { // the sidecar's prefill request: max_tokens 1, do_remote_decode
            s.prefillReplica = replica;
            s.prefill = engineRequest(w, engine, 1, EngineRequest.NO_EOS)
                    .disaggregate(EngineRequest.Disaggregation.REMOTE_DECODE);
            s.prefill.attach(s);
            replica.submit(s.prefill);
            return;
        }
        EngineRequest r = engineRequest(w, engine, w.maxTokens(), eosAfter(w));
        r.attach(s);
        replica.submit(r);
    }

    private EngineRequest engineRequest(WorkloadRequest w, EngineCore engine, int maxTokens, int eosAfter) {
        boolean shared = w.hasSharedPrefix() && engine.deployment().enablePrefixCaching();
        return new EngineRequest(w.index(), w.promptTokens(), shared ? w.promptTokenIds(vocabSize) : null,
                maxTokens, 0, eosAfter, 0, clock, adapter(w.lora(), engine));
    }

    private static int eosAfter(WorkloadRequest w) {
        return w.outputTokens() >= w.maxTokens() ? EngineRequest.NO_EOS : w.outputTokens();
    }

    /** The sidecar's second step: the original request, with the prefill's KV to pull, to a decode replica. */
    private void decode(RequestState s) {
        Replica replica = pd.routeDecode(s);
        s.replica = replica;
        EngineRequest r = engineRequest(s.request, replica.engine(), s.request.maxTokens(), eosAfter(s.request))
                .disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        r.attach(s);
        replica.submit(r);
    }

    /** The adapter of that name, numbered from 1 in the order the run first meets it, the same on every replica. */
    private LoraAdapter adapter(String name, EngineCore engine) {
        if (name == null) {
            return null;
        }
        if (engine.deployment().lora() == null) {
            throw new ConfigException("the workload runs requests on LoRA adapter " + name + "; serve it with --enable-lora");
        }
        return adapters.computeIfAbsent(name, n -> new LoraAdapter(adapters.size() + 1, n));
    }

    /**
     * Applies a step's tokens and completions. Requests that also got a token from the replica's previous step share one
     * gap (this step's end minus that one's), so they are counted and recorded once; only the others, first tokens and
     * tokens after a preemption or chunk, are recorded one by one.
     */
    private void handleStepEnd(Replica replica) {
        long previousEnd = replica.lastStepEndNanos();
        StepOutcome out = replica.completeStep();
        long end = out.endNanos();
        int measuredTokens = 0;
        int previousStepGaps = 0;
        for (int i = 0, n = out.tokenCount(); i < n; i++) {
            EngineRequest tokenOf = out.tokenRequest(i);
            if (pd != null && DisaggregatedFleet.isPrefillRequest(tokenOf)) {
                continue; // the prefill's one token goes to the proxy, which drops it
            }
            RequestState s = (RequestState) tokenOf.attachment();
            if (s.measured) {
                measuredTokens++;
                // A first token (lastTokenNanos -1) opens no gap, even in the replica's first step, whose previousEnd
                // is -1 too.
                if (s.lastTokenNanos >= 0) {
                    if (s.lastTokenNanos == previousEnd) {
                        previousStepGaps++;
                    } else {
                        stats.recordItl(end - s.lastTokenNanos);
                    }
                }
            }
            if (s.gapNanos != null && s.lastTokenNanos >= 0) {
                s.recordGap(end - s.lastTokenNanos);
            }
            s.lastTokenNanos = end;
        }
        fleet.stepEnded(replica, end);
        if (previousStepGaps > 0) {
            stats.recordItl(end - previousEnd, previousStepGaps);
        }
        if (measuredTokens > 0) {
            stats.recordTokens(end, measuredTokens);
        }
        for (int i = 0, n = out.finishedCount(); i < n; i++) {
            EngineRequest r = out.finished(i);
            if (pd != null && DisaggregatedFleet.isPrefillRequest(r)) {
                decode((RequestState) r.attachment());
            } else {
                complete((RequestState) r.attachment(), r, null);
            }
        }
    }

    private void complete(RequestState s, EngineRequest r, String error) {
        inFlight--;
        finished++;
        EngineRequest first = s.prefill != null ? s.prefill : r; // where the request was first scheduled
        RequestRecord record = r == null
                ? new RequestRecord(s.request.index(), s.request.requestClass(), s.request.arrivalNanos(), s.sendNanos,
                        -1, -1, s.request.promptTokens(), 0, -1, -1, -1, -1, null, error)
                : new RequestRecord(s.request.index(), s.request.requestClass(), s.request.arrivalNanos(), s.sendNanos,
                        r.firstTokenNanos(), r.finishedNanos(), r.promptTokens(), r.outputTokens(), first.cachedPromptTokens(),
                        first.firstScheduledNanos() - s.sendNanos, r.firstTokenNanos() - first.firstScheduledNanos(),
                        r.preemptions() + (first != r ? first.preemptions() : 0), r.finishReason().openAiName(), null);
        sumSojournNanos += clock - s.sendNanos;
        if (s.measured) {
            if (r != null && r.firstTokenNanos() >= 0) {
                s.replica.served(r.firstTokenNanos() - s.sendNanos, first.firstScheduledNanos() - s.sendNanos);
            }
            stats.recordRequest(record);
            latencySeries.record(record);
            windowEndNanos = clock;
        }
        if (detail != null) {
            detail.write(record, 0, !s.measured, null, s.gapNanos, s.gaps);
        }
        if (!clientQueue.isEmpty()) {
            send(clientQueue.poll());
        }
    }

    private void checkDrained() {
        for (Replica r : fleet.live()) {
            if (!r.engine().isIdle()) {
                throw new IllegalStateException("replica " + r.id() + " stopped with " + r.engine().waitingCount()
                        + " waiting and " + r.engine().runningCount() + " running requests it cannot schedule");
            }
        }
    }

    private SimulationResult result() {
        ServingStats measured = stats != null ? stats : new ServingStats(options.slo(), 0);
        if (!stopped) {
            measured.sendingEnded(lastSendNanos);
        }
        long duration = stats != null ? windowEndNanos - windowStartNanos : 0;
        SaturationVerdict verdict;
        if (closedLoop) {
            verdict = SaturationVerdict.closedLoop(maxConcurrency);
        } else if (lastArrivalNanos == firstArrivalNanos && maxConcurrency == 0) {
            verdict = SaturationVerdict.burst(arrived);
        } else {
            verdict = SaturationVerdict.assess(timeline, firstArrivalNanos, lastArrivalNanos);
        }
        long span = clock - Math.max(firstSendNanos, 0);
        return new SimulationResult(measured, duration, timeline, verdict, fleet.everyReplica(), sent,
                span > 0 ? requestNanosInSystem / span : 0,
                span > 0 ? sent * 1e9 / span : 0,
                sent > 0 ? sumSojournNanos / sent : 0,
                sent - (measured.completed() + measured.failed()), stopped, fleet.series(), fleet.gpuSeconds(clock),
                latencySeries, options.dollarsPerGpuHour(), pd);
    }

    /** Per-request driver state, attached to its {@link EngineRequest} (both of them when disaggregated); routers read the request through it. */
    private static final class RequestState implements RoutedRequest, DisaggregatedFleet.Handoff {
        final WorkloadRequest request;
        final long sendNanos;
        final boolean measured;
        /** The replica that serves its tokens (disaggregated: the decode replica, once it has one). */
        Replica replica;
        /** Disaggregated: the prefill request and its replica, which holds its blocks until {@link #release}. */
        EngineRequest prefill;
        Replica prefillReplica;
        long lastTokenNanos = -1;
        /** The gaps between the request's tokens, kept only for the per-request detail file; else null. */
        long[] gapNanos;
        int gaps;

        RequestState(WorkloadRequest request, long sendNanos, boolean measured, boolean keepGaps) {
            this.request = request;
            this.sendNanos = sendNanos;
            this.measured = measured;
            this.gapNanos = keepGaps ? new long[16] : null;
        }

        @Override
        public void release() {
            prefillReplica.engine().releaseKv(prefill);
        }

        @Override
        public int promptTokens() {
            return request.promptTokens();
        }

        @Override
        public String lora() {
            return request.lora();
        }

        @Override
        public int fillLeadingTokenIds(int[] dst, int count, int vocabSize) {
            return request.fillLeadingTokenIds(dst, count, vocabSize);
        }

        void recordGap(long nanos) {
            if (gaps == gapNanos.length) {
                gapNanos = Arrays.copyOf(gapNanos, 2 * gaps);
            }
            gapNanos[gaps++] = nanos;
        }
    }
}
