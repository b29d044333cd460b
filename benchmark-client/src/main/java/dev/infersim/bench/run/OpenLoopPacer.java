package dev.infersim.bench.run;

import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.buffer.Buffer;

import java.util.Iterator;
import java.util.concurrent.Semaphore;
import java.util.function.BooleanSupplier;

/**
 * The open loop's pacer, on the calling thread and on a {@link ClientClock}: for each request, in schedule order, it
 * renders the body, takes a {@code --max-concurrency} permit if there is a cap (vLLM's semaphore), waits, and hands the
 * request over with the instant it is to go out. Without a cap it hands over {@value #HANDOFF_LEAD_NANOS} ns ahead of
 * the scheduled instant, and the receiver sends it from its own timer then; with one it waits for the scheduled instant
 * itself, so that no permit is held before its request's time, and the request goes out at the later of its scheduled
 * instant and the instant it got its slot (its origin: latencies count from there; the wait is the client queue time).
 * Requests are warmup when among the first {@code warmupCount} or scheduled within {@code warmupNanos}; the measured
 * window starts at the first other request's origin and, with a duration, stops taking requests that long after.
 */
final class OpenLoopPacer {
    /**
     * Far enough ahead that the pacer's own lateness never reaches a send: on a 2-core machine at load 3-10 the pacer
     * woke more than 2 ms late for 1-13% of requests (up to 244 ms late), and each of those sends was late by as much.
     * Handed over 50 ms ahead, the receiving event loop's timer alone decides when a request goes out.
     */
    static final long HANDOFF_LEAD_NANOS = 50_000_000;
    /** How long one wait for a permit lasts before the pacer checks whether the run was stopped. */
    private static final long PERMIT_POLL_NANOS = 50_000_000;

    /** Takes a paced request: it is to go out at its schedule's origin, the {@code issued}-th handed over. */
    interface Sends {
        void sendAt(long issued, WorkloadRequest r, Buffer body, SendSchedule schedule, MeasuredWindow into);
    }

    /** What the pacer handed over: the warmup and measured windows (null when nothing was measured), the last origin. */
    record Paced(MeasuredWindow warmup, MeasuredWindow measured, long lastOriginNanos) {
    }

    private final ClientClock clock;
    private final RequestBodies bodies;
    private final boolean countTextTokens;
    private final BooleanSupplier stopped;
    private final Runnable stop;

    /**
     * @param countTextTokens whether the windows count completion text (the completions endpoint) rather than chat
     * @param stopped         whether the run was stopped (SIGINT): no more hand-overs
     * @param stop            stops the run: the pacer was interrupted while waiting for a permit
     */
    OpenLoopPacer(ClientClock clock, RequestBodies bodies, boolean countTextTokens, BooleanSupplier stopped,
                  Runnable stop) {
        this.clock = clock;
        this.bodies = bodies;
        this.countTextTokens = countTextTokens;
        this.stopped = stopped;
        this.stop = stop;
    }

    /**
     * Paces the stream from {@code startNanos} and returns once the last request's origin has come (unless stopped).
     *
     * @param permits the concurrency cap's permits, released by whoever ends a request; null for no cap
     * @param log     per-request detail sink for the measured window, or null
     */
    Paced run(Iterator<WorkloadRequest> requests, long startNanos, Semaphore permits, long warmupCount,
              long warmupNanos, long durationNanos, GoodputSlo slo, RequestLogWriter log, Sends sends) {
        MeasuredWindow warm = new MeasuredWindow(startNanos, startNanos, GoodputSlo.NONE, null, countTextTokens);
        MeasuredWindow measured = null;
        long issued = 0;
        long lastOrigin = startNanos;
        long lastScheduled = Long.MIN_VALUE;
        while (!stopped.getAsBoolean() && requests.hasNext()) {
            WorkloadRequest r = requests.next();
            long scheduled = startNanos + r.arrivalNanos();
            boolean isWarmup = r.index() < warmupCount || r.arrivalNanos() < warmupNanos;
            if (measured != null && durationNanos > 0
                    && Math.max(scheduled, clock.nanoTime()) - measured.startNanos() >= durationNanos) {
                break;
            }
            Buffer body = bodies.body(r);
            long slotNanos = Long.MIN_VALUE;
            if (permits != null) {
                if (!acquire(permits)) {
                    break;
                }
                slotNanos = clock.nanoTime();
            }
            clock.sleepUntil(scheduled - (permits == null ? HANDOFF_LEAD_NANOS : 0), ClientClock.SPIN_NANOS);
            long origin = Math.max(scheduled, slotNanos);
            if (!isWarmup && measured == null) {
                measured = new MeasuredWindow(origin, startNanos, slo, log, countTextTokens);
                measured.keepSendTimes();
            }
            long gap = lastScheduled == Long.MIN_VALUE ? SendSchedule.NO_GAP : scheduled - lastScheduled;
            sends.sendAt(issued, r, body, new SendSchedule(scheduled, gap, origin), isWarmup ? warm : measured);
            issued++;
            lastScheduled = scheduled;
            lastOrigin = origin;
        }
        if (!stopped.getAsBoolean()) {
            // the receivers send up to the hand-off lead after the last hand-off
            clock.sleepUntil(lastOrigin, ClientClock.SPIN_NANOS);
        }
        return new Paced(warm, measured, lastOrigin);
    }

    /** A permit, or false once the run was stopped (or the pacer interrupted) while waiting for one. */
    private boolean acquire(Semaphore permits) {
        try {
            while (!stopped.getAsBoolean()) {
                if (clock.tryAcquire(permits, PERMIT_POLL_NANOS)) {
                    return true;
                }
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop.run();
            return false;
        }
    }
}
