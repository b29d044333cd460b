package dev.infersim.bench.run;

import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.WorkloadRequest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The open loop's pacing, in virtual time: when requests are handed over and when they go out. */
class OpenLoopPacerTest {
    private static final long MS = 1_000_000;
    private static final long START = 10_000 * MS;
    private static final RequestBodies BODIES = new RequestBodies("llama-3.1-8b", false, true, PromptRenderer.cl100k());

    /** One request handed over: at which virtual instant, to go out when, and when it went out. */
    private record Send(long index, long handedAt, long scheduled, long origin, long sentAt) {
    }

    private final VirtualClientClock clock = new VirtualClientClock(0);
    private final List<Send> sends = new ArrayList<>();
    private boolean stopped;

    private OpenLoopPacer pacer() {
        return new OpenLoopPacer(clock, BODIES, true, () -> stopped, () -> stopped = true);
    }

    /** A receiver that sends each request from a timer at its origin and, with permits, holds one for {@code busy}. */
    private OpenLoopPacer.Sends lane(Semaphore permits, long busyNanos) {
        return (issued, r, body, schedule, into) -> {
            long handedAt = clock.nanoTime();
            clock.schedule(null, schedule.originNanos(), () -> {
                sends.add(new Send(r.index(), handedAt, schedule.scheduledNanos(), schedule.originNanos(),
                        clock.nanoTime()));
                if (permits != null) {
                    clock.schedule(null, clock.nanoTime() + busyNanos, permits::release);
                }
            });
        };
    }

    private static List<WorkloadRequest> arrivingAtMs(long... arrivalsMs) {
        List<WorkloadRequest> requests = new ArrayList<>();
        for (int i = 0; i < arrivalsMs.length; i++) {
            requests.add(new WorkloadRequest(i, arrivalsMs[i] * MS, 16, 0, -1, 8, 8, 7 + i, 0, false, "random", null));
        }
        return requests;
    }

    @Test
    void openLoopSendsEveryRequestAtItsScheduledInstantWithZeroSendLag() {
        long[] arrivalsMs = {0, 10, 25, 25, 40, 300};
        OpenLoopPacer.Paced paced = pacer().run(arrivingAtMs(arrivalsMs).iterator(), START, null, 0, 0, 0,
                GoodputSlo.NONE, null, lane(null, 0));
        assertEquals(arrivalsMs.length, sends.size());
        for (int i = 0; i < arrivalsMs.length; i++) {
            Send s = sends.get(i);
            long scheduled = START + arrivalsMs[i] * MS;
            assertEquals(scheduled, s.scheduled(), "request " + i + "'s scheduled instant");
            assertEquals(scheduled, s.origin(), "without a cap, latencies count from the scheduled instant");
            assertEquals(0, s.sentAt() - s.origin(), "request " + i + "'s send lag");
            assertEquals(Math.max(0, scheduled - OpenLoopPacer.HANDOFF_LEAD_NANOS), s.handedAt(),
                    "handed over the lead ahead, so that the pacer's lateness never reaches the send");
        }
        assertEquals(START, paced.measured().startNanos(), "the window starts at the first measured request");
        assertEquals(START + 300 * MS, paced.lastOriginNanos());
        assertEquals(START + 300 * MS, clock.nanoTime(), "the pacer returns once the last request's time came");
    }

    @Test
    void maxConcurrencyHoldsASendUntilASlotFreesAndCountsItFromThen() {
        Semaphore permits = new Semaphore(2);
        long busy = 100 * MS;
        pacer().run(arrivingAtMs(0, 1, 2, 3, 500).iterator(), START, permits, 0, 0, 0, GoodputSlo.NONE, null,
                lane(permits, busy));
        long[] sentAtMs = {0, 1, 100, 101, 500};
        for (int i = 0; i < sentAtMs.length; i++) {
            Send s = sends.get(i);
            assertEquals(START + sentAtMs[i] * MS, s.sentAt(), "request " + i + " goes out when it has a slot");
            assertEquals(s.sentAt(), s.origin(), "its latencies count from the slot, not from its scheduled time");
            assertEquals(s.origin(), s.handedAt(), "with a cap no permit is held before the request's time");
        }
        assertEquals(START + 2 * MS, sends.get(2).scheduled(), "the wait for a slot is client queue time");
    }

    @Test
    void warmupRequestsAreMeasuredApartAndTheDurationEndsTheMeasuredSends() {
        OpenLoopPacer.Paced paced = pacer().run(arrivingAtMs(0, 100, 200, 300, 400, 500).iterator(), START, null,
                1, 150 * MS, 250 * MS, GoodputSlo.NONE, null, lane(null, 0));
        assertEquals(START + 200 * MS, paced.measured().startNanos(), "warmup: the first request and the first 150 ms");
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), sends.stream().map(Send::index).toList(),
                "the request 250 ms after the window's start is not sent");
    }

    @Test
    void aStoppedRunHandsOverNothingMore() {
        OpenLoopPacer.Sends stopAfterTwo = (issued, r, body, schedule, into) -> {
            sends.add(new Send(r.index(), clock.nanoTime(), schedule.scheduledNanos(), schedule.originNanos(), -1));
            stopped = issued == 1;
        };
        pacer().run(arrivingAtMs(0, 10, 20, 30).iterator(), START, null, 0, 0, 0, GoodputSlo.NONE, null,
                stopAfterTwo);
        assertEquals(2, sends.size());
    }
}
