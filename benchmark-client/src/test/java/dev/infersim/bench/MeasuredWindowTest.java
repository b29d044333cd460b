package dev.infersim.bench;

import dev.infersim.sim.GoodputSlo;
import dev.infersim.workload.WorkloadRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MeasuredWindowTest {
    private static final long SECOND = 1_000_000_000L;

    /** A request sent at {@code sendNanos} that streamed 8 tokens and ended {@code latencyNanos} later. */
    private static Exchange completed(long index, long sendNanos, long latencyNanos) {
        Exchange x = new Exchange(null, null, null, null, null);
        x.request = new WorkloadRequest(index, sendNanos, 16, 0, -1, 8, 8, index, 0, false, "random", null);
        x.scheduledNanos = sendNanos;
        x.originNanos = sendNanos;
        x.sendNanos = sendNanos;
        x.firstTokenNanos = sendNanos + latencyNanos / 2;
        x.lastTokenNanos = sendNanos + latencyNanos;
        x.usageCompletionTokens = 8;
        return x;
    }

    @Test
    void steadyThroughputLeavesOutTheFirstResponseWaitAndTheDrain() {
        // 10 req/s for 10 s, every request taking 2 s: 100 requests in an 11.9 s window, but 10 req/s while sending.
        MeasuredWindow w = new MeasuredWindow(0, GoodputSlo.NONE, null, true);
        long lastSend = 99 * SECOND / 10;
        boolean sending = true;
        for (int i = 0; i < 100; i++) {
            long send = i * SECOND / 10;
            long done = send + 2 * SECOND;
            if (sending && done > lastSend) {
                w.sendingEnded(lastSend);
                sending = false;
            }
            w.record(completed(i, send, 2 * SECOND), done);
        }
        double wholeRun = w.stats.completed() / (w.durationNanos() / 1e9);
        assertTrue(wholeRun < 0.9 * 10, "over the whole window " + wholeRun + " req/s");
        assertEquals(10.0, w.steadyRequestThroughput(), 1e-9);
    }

    @Test
    void steadyThroughputIsUnknownWhenNothingCompletedWhileSending() {
        MeasuredWindow w = new MeasuredWindow(0, GoodputSlo.NONE, null, true);
        w.sendingEnded(SECOND);
        w.record(completed(0, 0, 3 * SECOND), 3 * SECOND);
        assertTrue(Double.isNaN(w.steadyRequestThroughput()));
    }
}
