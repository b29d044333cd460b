package dev.infersim.bench;

import dev.infersim.sim.GoodputSlo;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.RequestOptions;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends one stream of requests on an absolute schedule and measures them.
 *
 * <p>Open loop: the calling thread is the pacer. For each request it renders the body ahead of time, waits until
 * {@code start + arrivalNanos} (parking until {@value #SPIN_NANOS} ns before, then spinning, so the schedule neither
 * drifts nor quantizes to timer ticks) and hands the request to the event loop, whatever the responses are doing.
 * Latencies count from the scheduled time, so a slow server cannot hide queueing behind a slow client (coordinated
 * omission); the actual send time is kept as send lag. With a concurrency cap the pacer first takes a permit (vLLM's
 * {@code --max-concurrency} semaphore): latencies then count from when the request got its slot, and the wait is
 * the client queue time.
 *
 * <p>Closed loop (rate inf, cap N): no pacer; the event loop sends the next request the moment one ends, so exactly N
 * are in flight until the stream runs out, and latencies count from that moment.
 *
 * <p>Every request ends: by its response, its timeout, or the run's deadline (last send + request timeout + 5 s),
 * after which whatever is still in flight is aborted and counted as {@code deadline}.
 */
final class LoadRun {
    private static final long SPIN_NANOS = 100_000;
    private static final long LEAD_NANOS = 20_000_000;
    private static final long DEADLINE_GRACE_NANOS = 5_000_000_000L;

    private final Vertx vertx;
    private final Context loop;
    private final HttpClient client;
    private final RequestOptions options;
    private final PromptRenderer renderer;
    private final RequestBodies bodies;
    private final BenchConfig config;
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean stopped;

    // Owned by the event loop.
    private final ArrayDeque<Exchange> pool = new ArrayDeque<>();
    private final List<Exchange> active = new ArrayList<>();
    private Semaphore permits;
    private ClosedLoop closedLoop;
    private int maxActive;
    private long activeSinceNanos;
    private double activeIntegralNanos;

    LoadRun(Vertx vertx, Context loop, HttpClient client, RequestOptions options, PromptRenderer renderer,
            BenchConfig config) {
        this.vertx = vertx;
        this.loop = loop;
        this.client = client;
        this.options = options;
        this.renderer = renderer;
        this.config = config;
        this.bodies = new RequestBodies(config.model(), config.chat(), config.ignoreEos(), renderer);
    }

    /**
     * What a run measured: the warmup window (discarded by callers), the measured window, and the client's own
     * in-flight accounting: the most requests ever in flight, and the time-average while requests were still being
     * sent (for a closed loop of N, close to N; the drain at the end is left out).
     */
    record Phase(MeasuredWindow warmup, MeasuredWindow window, int maxInFlight, double meanInFlight, long issued,
                 boolean interrupted) {
    }

    /** Makes the running phase stop issuing and abort what is in flight (SIGINT); callable from any thread. */
    void stop() {
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
     */
    Phase run(Iterator<WorkloadRequest> requests, boolean closedLoop, int maxConcurrency, long warmupCount,
              long warmupNanos, long durationNanos, GoodputSlo slo, RequestLog log) {
        if (closedLoop) {
            return runClosedLoop(requests, maxConcurrency, warmupCount, warmupNanos, durationNanos, slo, log);
        }
        long start = System.nanoTime() + LEAD_NANOS;
        MeasuredWindow warm = new MeasuredWindow(start, GoodputSlo.NONE, null, !config.chat());
        MeasuredWindow measured = null;
        Semaphore cap = maxConcurrency > 0 ? new Semaphore(maxConcurrency) : null;
        onLoop(() -> {
            permits = cap;
            maxActive = 0;
            activeIntegralNanos = 0;
            activeSinceNanos = start;
        });
        long issued = 0;
        long lastOrigin = start;
        while (!stopped && requests.hasNext()) {
            WorkloadRequest r = requests.next();
            long scheduled = start + r.arrivalNanos();
            boolean isWarmup = r.index() < warmupCount || r.arrivalNanos() < warmupNanos;
            if (measured != null && durationNanos > 0
                    && Math.max(scheduled, System.nanoTime()) - measured.startNanos >= durationNanos) {
                break;
            }
            Buffer body = bodies.body(r);
            long slotNanos = Long.MIN_VALUE;
            if (cap != null) {
                if (!acquire(cap)) {
                    break;
                }
                slotNanos = System.nanoTime();
            }
            waitUntil(scheduled);
            long origin = Math.max(scheduled, slotNanos);
            if (!isWarmup && measured == null) {
                measured = new MeasuredWindow(origin, slo, log, !config.chat());
            }
            MeasuredWindow into = isWarmup ? warm : measured;
            inFlight.incrementAndGet();
            loop.runOnContext(v -> dispatch(r, body, scheduled, origin, into));
            issued++;
            lastOrigin = origin;
        }
        double[] sendingMean = new double[1];
        MeasuredWindow sent = measured;
        onLoop(() -> {
            long now = System.nanoTime();
            accumulateActive(now);
            sendingMean[0] = activeIntegralNanos / Math.max(1, activeSinceNanos - start);
            if (sent != null) {
                sent.sendingEnded(now);
            }
        });
        awaitDrain(lastOrigin + config.requestTimeoutMillis() * 1_000_000L + DEADLINE_GRACE_NANOS);
        boolean interrupted = stopped;
        MeasuredWindow window = measured != null ? measured
                : new MeasuredWindow(System.nanoTime(), slo, null, !config.chat());
        CompletableFuture<Phase> result = new CompletableFuture<>();
        long issuedTotal = issued;
        onLoop(() -> result.complete(new Phase(warm, window, maxActive, sendingMean[0], issuedTotal, interrupted)));
        return result.join();
    }

    /**
     * A closed loop of {@code users}: the event loop itself sends the next request the moment one ends (no thread
     * hand-off), so exactly {@code users} are in flight until the stream runs out. Latencies count from that moment.
     * Warmup is the first {@code warmupCount} requests and those sent within {@code warmupNanos} of the start.
     */
    private Phase runClosedLoop(Iterator<WorkloadRequest> requests, int users, long warmupCount, long warmupNanos,
                                long durationNanos, GoodputSlo slo, RequestLog log) {
        ClosedLoop feed = new ClosedLoop(requests, warmupCount, warmupNanos, durationNanos, slo, log);
        onLoop(() -> {
            feed.begin(System.nanoTime());
            permits = null;
            maxActive = 0;
            activeIntegralNanos = 0;
            activeSinceNanos = feed.start;
            closedLoop = feed;
            for (int i = 0; i < users; i++) {
                feed.sendNext();
            }
            // The in-flight average starts once all users are in: it measures the loop, not its start-up.
            activeIntegralNanos = 0;
            activeSinceNanos = System.nanoTime();
            feed.steadyFromNanos = activeSinceNanos;
        });
        while (!feed.exhausted && !stopped) {
            LockSupport.parkNanos(5_000_000);
        }
        awaitDrain(System.nanoTime() + config.requestTimeoutMillis() * 1_000_000L + DEADLINE_GRACE_NANOS);
        boolean interrupted = stopped;
        CompletableFuture<Phase> result = new CompletableFuture<>();
        onLoop(() -> {
            closedLoop = null;
            feed.markExhausted();
            MeasuredWindow window = feed.measured != null ? feed.measured
                    : new MeasuredWindow(System.nanoTime(), slo, null, !config.chat());
            result.complete(new Phase(feed.warm, window, maxActive, feed.sendingMean, feed.issued, interrupted));
        });
        return result.join();
    }

    /** The request stream of a closed loop, consumed on the event loop. */
    private final class ClosedLoop {
        private final Iterator<WorkloadRequest> requests;
        private final long warmupCount;
        private final long warmupNanos;
        private final long durationNanos;
        private final GoodputSlo slo;
        private final RequestLog log;
        private long start;
        private long steadyFromNanos;
        private MeasuredWindow warm;
        MeasuredWindow measured;
        long issued;
        double sendingMean;
        volatile boolean exhausted;

        ClosedLoop(Iterator<WorkloadRequest> requests, long warmupCount, long warmupNanos, long durationNanos,
                   GoodputSlo slo, RequestLog log) {
            this.requests = requests;
            this.warmupCount = warmupCount;
            this.warmupNanos = warmupNanos;
            this.durationNanos = durationNanos;
            this.slo = slo;
            this.log = log;
        }

        void begin(long nowNanos) {
            start = nowNanos;
            warm = new MeasuredWindow(nowNanos, GoodputSlo.NONE, null, !config.chat());
        }

        void sendNext() {
            long now = System.nanoTime();
            boolean pastDuration = measured != null && durationNanos > 0 && now - measured.startNanos >= durationNanos;
            if (exhausted || stopped || pastDuration || !requests.hasNext()) {
                markExhausted();
                return;
            }
            WorkloadRequest r = requests.next();
            boolean isWarmup = r.index() < warmupCount || now - start < warmupNanos;
            if (!isWarmup && measured == null) {
                measured = new MeasuredWindow(now, slo, log, !config.chat());
            }
            inFlight.incrementAndGet();
            issued++;
            dispatch(r, bodies.body(r), now, now, isWarmup ? warm : measured);
        }

        void markExhausted() {
            if (!exhausted) {
                long now = System.nanoTime();
                accumulateActive(now);
                long from = steadyFromNanos > 0 ? steadyFromNanos : start;
                sendingMean = activeIntegralNanos / Math.max(1, activeSinceNanos - from);
                if (measured != null) {
                    measured.sendingEnded(now);
                }
                exhausted = true;
            }
        }
    }

    private boolean acquire(Semaphore cap) {
        try {
            while (!stopped) {
                if (cap.tryAcquire(50, TimeUnit.MILLISECONDS)) {
                    return true;
                }
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped = true;
            return false;
        }
    }

    private static void waitUntil(long deadlineNanos) {
        long remaining;
        while ((remaining = deadlineNanos - System.nanoTime()) > 0) {
            if (remaining > SPIN_NANOS) {
                LockSupport.parkNanos(remaining - SPIN_NANOS);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    private void dispatch(WorkloadRequest r, Buffer body, long scheduled, long origin, MeasuredWindow into) {
        Exchange x = pool.poll();
        if (x == null) {
            x = new Exchange(vertx, client, options, renderer, this::finished);
        }
        accumulateActive(System.nanoTime());
        active.add(x);
        maxActive = Math.max(maxActive, active.size());
        x.window = into;
        x.start(r, body, scheduled, origin, config.requestTimeoutMillis());
    }

    private void finished(Exchange x) {
        long now = System.nanoTime();
        accumulateActive(now);
        int at = active.lastIndexOf(x);
        active.set(at, active.get(active.size() - 1));
        active.remove(active.size() - 1);
        try {
            if (!"interrupted".equals(x.errorType)) {
                x.window.record(x, now);
            }
        } finally {
            inFlight.decrementAndGet(); // even if recording fails, the run must be able to drain and end
        }
        if (closedLoop != null) {
            // The next user request goes out now, before x returns to the pool: x is still inside its own callbacks.
            closedLoop.sendNext();
        }
        pool.push(x);
        if (permits != null) {
            permits.release();
        }
    }

    private void accumulateActive(long now) {
        activeIntegralNanos += (double) active.size() * Math.max(0, now - activeSinceNanos);
        activeSinceNanos = Math.max(activeSinceNanos, now);
    }

    private void awaitDrain(long deadlineNanos) {
        while (inFlight.get() > 0 && System.nanoTime() < deadlineNanos && !stopped) {
            LockSupport.parkNanos(5_000_000);
        }
        if (inFlight.get() > 0) {
            String abortType = stopped ? "interrupted" : "deadline";
            String message = stopped ? "the run was interrupted" : "still in flight when the run's deadline passed";
            onLoop(() -> {
                for (Exchange x : new ArrayList<>(active)) {
                    x.abort(abortType, message);
                }
            });
            while (inFlight.get() > 0) {
                LockSupport.parkNanos(1_000_000);
            }
        }
    }

    private void onLoop(Runnable action) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        loop.runOnContext(v -> {
            try {
                action.run();
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        done.join();
    }
}
