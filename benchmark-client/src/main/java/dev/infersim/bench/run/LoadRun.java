package dev.infersim.bench.run;

import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.RequestOptions;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.function.BooleanSupplier;

/**
 * Sends one stream of requests on an absolute schedule and measures them.
 *
 * <p>Open loop: the calling thread is the {@link OpenLoopPacer}. For each request it renders the body ahead of time
 * and, about {@value OpenLoopPacer#HANDOFF_LEAD_NANOS} ns before the request's time {@code start + arrivalNanos}, hands
 * it to the next lane, whose event loop sends it from its own timer (Netty's, nanosecond-precise): so a send waits on
 * one thread wake-up, not on the pacer's and then the loop's, whatever the responses are doing. Latencies count from
 * the scheduled time, so a slow server cannot hide queueing behind a slow client (coordinated omission); the actual
 * send time is kept as send lag. With a concurrency cap the pacer first takes a permit (vLLM's
 * {@code --max-concurrency} semaphore), then waits for the scheduled time itself, so that no permit is held before its
 * request's time: latencies then count from when the request got its slot, and the wait is the client queue time.
 *
 * <p>Closed loop (rate inf, cap N): no pacer; the event loop sends the next request the moment one ends, so exactly N
 * are in flight until the stream runs out, and latencies count from that moment.
 *
 * <p>Requests are spread over {@link Lane}s, one per event loop ({@link LaneLoop}), each with its own connections so
 * that a connection, its requests and their callbacks stay on one thread: one loop alone runs out of CPU near 500
 * streamed requests/s. Open-loop sends go to the lanes in turn; the users of a closed loop are dealt out to them.
 *
 * <p>Each lane hands the outcomes of its ended requests to its own {@link OutcomeRecorder}; the run's thread alone takes
 * them from there and records them into the measured windows, in the order they ended, whenever it is awake (after a
 * hand-off, while it waits) and once more after the drain. No lock is shared between lanes, and no window is written by
 * more than one thread.
 *
 * <p>Every request ends: by its response, its timeout, or the run's deadline (last send + request timeout + 5 s),
 * after which whatever is still in flight is aborted and counted as {@code deadline}; on {@link #stop} it is aborted
 * at once and counted as cancelled.
 *
 * <p>All of it reads time from a {@link ClientClock}: the schedule, the sends' timers, the send lag, the timeouts, and
 * the waits for the closed loop's end and for the drain; so with a virtual clock and lanes whose server answers in
 * virtual time, a whole run (open or closed loop, warmup, duration, drain, interrupt) runs in virtual time.
 */
public final class LoadRun {
    private static final long LEAD_NANOS = 20_000_000;
    private static final long DEADLINE_GRACE_NANOS = 5_000_000_000L;
    /** How often the run's own thread looks whether the lanes are done: they end requests on their own threads. */
    private static final long POLL_NANOS = 5_000_000;
    /** The same once everything in flight was aborted, which takes a moment only. */
    private static final long ABORT_POLL_NANOS = 1_000_000;
    /** A start time meaning "as soon as the run is set up". */
    public static final long NOW = Long.MIN_VALUE;

    private final ClientClock clock;
    private final OpenLoopPacer pacer;
    private final OpenLoopPacer.Sends sends = this::handOff;
    private final PromptRenderer renderer;
    private final RequestBodies bodies;
    private final BenchConfig config;
    private final List<Lane> lanes = new ArrayList<>();
    private final InFlight inFlight = new InFlight();
    /** The lanes' outcomes taken by {@link #collect}, reused from one call to the next. */
    private final List<OutcomeRecorder.Ended> ended = new ArrayList<>();
    private long lastCollectNanos;
    private volatile boolean stopped;
    private volatile Semaphore permits;
    private volatile ClosedLoop closedLoop;

    /** One lane per pair of an event-loop context and the connections used only from it. */
    public LoadRun(ClientClock clock, List<Context> loops, List<LaneConnections> connections, RequestOptions options,
            PromptRenderer renderer, TokenCounter counter, BenchConfig config) {
        this(clock, VertxLaneLoop.of(clock, loops, connections, options, counter), renderer, config);
    }

    /** One lane per loop: {@link VertxLaneLoop}s for a run, virtual ones in tests. */
    LoadRun(ClientClock clock, List<LaneLoop> loops, PromptRenderer renderer, BenchConfig config) {
        this.clock = clock;
        this.renderer = renderer;
        this.config = config;
        this.bodies = new RequestBodies(config.model(), config.chat(), config.ignoreEos(), renderer, config.tokenTimes());
        this.pacer = new OpenLoopPacer(clock, bodies, !config.chat(), () -> stopped, this::stop);
        for (LaneLoop loop : loops) {
            lanes.add(new Lane(loop));
        }
    }

    /**
     * What a run measured: the warmup window (discarded by callers), the measured window, and the client's own
     * in-flight accounting: the most requests ever in flight, and the time-average while requests were still being
     * sent (for a closed loop of N, close to N; the drain at the end is left out).
     */
    public record Phase(MeasuredWindow warmup, MeasuredWindow window, int maxInFlight, double meanInFlight,
                 boolean interrupted) {
    }

    /** Makes the running phase stop issuing and abort what is in flight (SIGINT); callable from any thread. */
    public void stop() {
        stopped = true;
    }

    /**
     * Sends the stream on the calling thread and returns when every issued request has ended. As in the simulator,
     * the first {@code warmupCount} requests and those scheduled within {@code warmupNanos} of the start are warmup:
     * sent like the others but measured apart; the measured window starts at the first other request.
     *
     * @param closedLoop     every arrival is at 0 and {@code maxConcurrency} users each send their next request when
     *                       the previous one ends: run on the event loop, see {@link #runClosedLoop}
     * @param maxConcurrency cap on requests in flight; 0 for none
     * @param durationNanos  stop issuing measured requests this long after the window starts; 0 for no limit
     * @param log            per-request detail sink for measured requests, or null
     * @param startNanos     when the schedule starts (on the {@link ClientClock}), so that shards on several machines
     *                       start together; {@link #NOW} for right away
     */
    public Phase run(Iterator<WorkloadRequest> requests, boolean closedLoop, int maxConcurrency, long warmupCount,
              long warmupNanos, long durationNanos, GoodputSlo slo, RequestLogWriter log, long startNanos) {
        long start = startNanos == NOW ? clock.nanoTime() + LEAD_NANOS : startNanos;
        if (closedLoop) {
            return runClosedLoop(requests, maxConcurrency, warmupCount, warmupNanos, durationNanos, slo, log, start);
        }
        Semaphore cap = maxConcurrency > 0 ? new Semaphore(maxConcurrency) : null;
        permits = cap;
        inFlight.reset(start);
        OpenLoopPacer.Paced paced = pacer.run(requests, start, cap, warmupCount, warmupNanos, durationNanos, slo, log,
                sends);
        MeasuredWindow measured = paced.measured();
        long sendingEnd = clock.nanoTime();
        double sendingMean = inFlight.mean(sendingEnd);
        if (measured != null) {
            measured.sendingEnded(sendingEnd);
        }
        awaitDrain(paced.lastOriginNanos() + config.requestTimeoutMillis() * 1_000_000L + DEADLINE_GRACE_NANOS);
        collect();
        MeasuredWindow window = measured != null ? measured
                : new MeasuredWindow(clock.nanoTime(), start, slo, null, !config.chat());
        return new Phase(paced.warmup(), window, inFlight.max(), sendingMean, stopped);
    }

    /**
     * Hands a paced request to the lanes in turn, counted as handed off until its time comes; then, at most every
     * {@link #POLL_NANOS}, records what ended meanwhile (the hand-off is {@link OpenLoopPacer#HANDOFF_LEAD_NANOS} ahead
     * of the send, so this delays no send).
     */
    private void handOff(long issued, WorkloadRequest r, Buffer body, SendSchedule schedule, MeasuredWindow into) {
        inFlight.handedOff();
        lanes.get((int) (issued % lanes.size())).sendAt(r, body, schedule, into);
        if (clock.nanoTime() - lastCollectNanos >= POLL_NANOS) {
            collect();
        }
    }

    /**
     * On the run's thread: records every request the lanes ended since the last call into its window, in the order
     * they ended (the lanes' own orders merged).
     */
    private void collect() {
        for (Lane lane : lanes) {
            lane.outcomes.drainTo(ended);
        }
        ended.sort(BY_END);
        for (OutcomeRecorder.Ended e : ended) {
            e.into().record(e.outcome());
        }
        ended.clear();
        lastCollectNanos = clock.nanoTime();
    }

    private static final Comparator<OutcomeRecorder.Ended> BY_END =
            Comparator.comparingLong(e -> e.outcome().endedNanos());

    /** Waits as {@link ClientClock#awaitCondition} does, recording what ends meanwhile. */
    private boolean awaitCollecting(BooleanSupplier done, long deadlineNanos, long pollNanos) {
        return clock.awaitCondition(() -> {
            collect();
            return done.getAsBoolean();
        }, deadlineNanos, pollNanos);
    }

    /**
     * A closed loop of {@code users}, dealt out to the lanes: each lane's event loop itself sends the next request the
     * moment one of its own ends (no thread hand-off), so exactly {@code users} are in flight until the stream runs
     * out. Latencies count from that moment. Warmup is the first {@code warmupCount} requests and those sent within
     * {@code warmupNanos} of the start.
     */
    private Phase runClosedLoop(Iterator<WorkloadRequest> requests, int users, long warmupCount, long warmupNanos,
                                long durationNanos, GoodputSlo slo, RequestLogWriter log, long start) {
        clock.sleepUntil(start, ClientClock.SPIN_NANOS);
        ClosedLoop feed = new ClosedLoop(requests, warmupCount, warmupNanos, durationNanos, slo, log, start);
        permits = null;
        inFlight.reset(feed.start);
        closedLoop = feed;
        for (int l = 0; l < lanes.size(); l++) {
            Lane lane = lanes.get(l);
            int laneUsers = users / lanes.size() + (l < users % lanes.size() ? 1 : 0);
            lane.loop.runAndWait(() -> {
                for (int i = 0; i < laneUsers; i++) {
                    feed.sendNext(lane);
                }
            });
        }
        // The in-flight average starts once all users are in: it measures the loop, not its start-up.
        inFlight.startAveraging(clock.nanoTime());
        awaitCollecting(() -> feed.exhausted || stopped, Long.MAX_VALUE, POLL_NANOS);
        awaitDrain(clock.nanoTime() + config.requestTimeoutMillis() * 1_000_000L + DEADLINE_GRACE_NANOS);
        collect();
        closedLoop = null;
        synchronized (feed) {
            feed.markExhausted(clock.nanoTime());
            MeasuredWindow window = feed.measured;
            if (window != null) {
                window.sendingEnded(feed.sendingEndNanos);
            } else {
                window = new MeasuredWindow(clock.nanoTime(), feed.start, slo, null, !config.chat());
            }
            return new Phase(feed.warm, window, inFlight.max(), feed.sendingMean, stopped);
        }
    }

    /**
     * The request stream of a closed loop, drawn from by every lane's event loop (under the feed's lock). It creates
     * the windows but writes nothing into them: that is the run thread's ({@link #collect}).
     */
    private final class ClosedLoop {
        private final Iterator<WorkloadRequest> requests;
        private final long warmupCount;
        private final long warmupNanos;
        private final long durationNanos;
        private final GoodputSlo slo;
        private final RequestLogWriter log;
        private final long start;
        private final MeasuredWindow warm;
        private MeasuredWindow measured;
        private double sendingMean;
        private long sendingEndNanos;
        volatile boolean exhausted;

        ClosedLoop(Iterator<WorkloadRequest> requests, long warmupCount, long warmupNanos, long durationNanos,
                   GoodputSlo slo, RequestLogWriter log, long start) {
            this.requests = requests;
            this.warmupCount = warmupCount;
            this.warmupNanos = warmupNanos;
            this.durationNanos = durationNanos;
            this.slo = slo;
            this.log = log;
            this.start = start;
            this.warm = new MeasuredWindow(start, start, GoodputSlo.NONE, null, !config.chat());
        }

        /** On {@code lane}'s event loop: sends the stream's next request there, or marks the stream exhausted. */
        void sendNext(Lane lane) {
            WorkloadRequest r;
            MeasuredWindow into;
            synchronized (this) {
                long now = clock.nanoTime();
                boolean pastDuration = measured != null && durationNanos > 0 && now - measured.startNanos() >= durationNanos;
                if (exhausted || stopped || pastDuration || !requests.hasNext()) {
                    markExhausted(now);
                    return;
                }
                r = requests.next();
                boolean isWarmup = r.index() < warmupCount || now - start < warmupNanos;
                if (!isWarmup && measured == null) {
                    measured = new MeasuredWindow(now, start, slo, log, !config.chat());
                }
                into = isWarmup ? warm : measured;
                inFlight.add(1, now);
            }
            // The request's latencies count from after the client's own preparation: rendering its body, and for the
            // first measured one the window's histograms (16-18 ms on 2 cores, once in the first TTFT before).
            Buffer body = lane.bodies.body(r);
            lane.dispatch(r, body, SendSchedule.unscheduled(clock.nanoTime()), into);
        }

        synchronized void markExhausted(long now) {
            if (!exhausted) {
                sendingMean = inFlight.mean(now);
                sendingEndNanos = now;
                exhausted = true;
            }
        }
    }

    /**
     * One lane's requests, on its loop: the exchanges in flight there with the window each request counts in, a pool
     * of idle exchanges to reuse, and the recorder its ended requests go to.
     */
    private final class Lane {
        final LaneLoop loop;
        final RequestBodies bodies;
        final OutcomeRecorder outcomes = new OutcomeRecorder();
        private final ArrayDeque<StreamExchange> pool = new ArrayDeque<>();
        private final List<StreamExchange> active = new ArrayList<>();
        private final List<MeasuredWindow> activeWindows = new ArrayList<>();

        Lane(LaneLoop loop) {
            this.loop = loop;
            this.bodies = new RequestBodies(config.model(), config.chat(), config.ignoreEos(), renderer, config.tokenTimes());
        }

        /**
         * From the pacer: sends the request at {@code origin} from this loop's timer. Counted in flight from then; a
         * request whose time comes after the run was stopped is dropped.
         */
        void sendAt(WorkloadRequest r, Buffer body, SendSchedule schedule, MeasuredWindow into) {
            loop.runAt(schedule.originNanos(), () -> {
                inFlight.sent(!stopped, clock.nanoTime());
                if (!stopped) {
                    dispatch(r, body, schedule, into);
                }
            });
        }

        void dispatch(WorkloadRequest r, Buffer body, SendSchedule schedule, MeasuredWindow into) {
            StreamExchange x = pool.poll();
            if (x == null) {
                x = loop.newExchange(this::finished);
            }
            active.add(x);
            activeWindows.add(into);
            loop.start(x, r, body, schedule, into.keepsText(), config.requestTimeoutMillis());
        }

        private void finished(StreamExchange x, RequestOutcome outcome) {
            int at = active.lastIndexOf(x);
            MeasuredWindow into = activeWindows.get(at);
            int last = active.size() - 1;
            active.set(at, active.get(last));
            activeWindows.set(at, activeWindows.get(last));
            active.remove(last);
            activeWindows.remove(last);
            loop.release(x);
            try {
                outcomes.record(into, outcome);
            } finally {
                inFlight.add(-1, outcome.endedNanos()); // even if recording fails, the run must be able to drain
            }
            ClosedLoop feed = closedLoop;
            if (feed != null) {
                // The next user request goes out now, before x returns to the pool: x is still inside its own callbacks.
                feed.sendNext(this);
            }
            pool.push(x);
            Semaphore cap = permits;
            if (cap != null) {
                cap.release();
            }
        }

        void abortAll(String type, String message) {
            for (StreamExchange x : new ArrayList<>(active)) {
                x.abort(type, message);
            }
        }
    }

    /**
     * Waits until nothing is in flight, the run is stopped or {@code deadlineNanos} passed; then aborts what is left
     * (as {@code deadline}, or cancelled when stopped) and waits until every lane has ended it.
     */
    private void awaitDrain(long deadlineNanos) {
        awaitCollecting(() -> inFlight.count() == 0 || stopped, deadlineNanos, POLL_NANOS);
        if (inFlight.count() > 0) {
            String abortType = stopped ? RequestOutcome.INTERRUPTED : "deadline";
            String message = stopped ? "the run was interrupted" : "still in flight when the run's deadline passed";
            for (Lane lane : lanes) {
                lane.loop.runAndWait(() -> lane.abortAll(abortType, message));
            }
            clock.awaitCondition(() -> inFlight.count() == 0, Long.MAX_VALUE, ABORT_POLL_NANOS);
        }
    }
}
