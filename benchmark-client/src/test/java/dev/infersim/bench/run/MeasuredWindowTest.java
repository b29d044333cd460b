package dev.infersim.bench.run;

import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.WorkloadRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MeasuredWindowTest {
    private static final long SECOND = 1_000_000_000L;

    /** A request sent at {@code sendNanos} that streamed 8 tokens and ended {@code latencyNanos} later. */
    private static RequestOutcome completed(long index, long sendNanos, long latencyNanos) {
        return completed(index, sendNanos, latencyNanos / 2, latencyNanos);
    }

    private static RequestOutcome completed(long index, long sendNanos, long ttftNanos, long latencyNanos) {
        return TestOutcomes.streamed(new WorkloadRequest(index, sendNanos, 16, 0, -1, 8, 8, index, 0, false, "random",
                null), sendNanos, sendNanos + ttftNanos, sendNanos + latencyNanos, 1, 8, 0, null);
    }

    /** 100 requests sent at 10 req/s, request i with the given TTFT and E2EL; sending ends with the last send. */
    private static MeasuredWindow tenPerSecond(java.util.function.LongUnaryOperator ttft, java.util.function.LongUnaryOperator e2el) {
        MeasuredWindow w = new MeasuredWindow(0, 0, GoodputSlo.NONE, null, true);
        w.sendingEnded(99 * SECOND / 10);
        for (int i = 0; i < 100; i++) {
            long send = i * SECOND / 10;
            w.record(completed(i, send, ttft.applyAsLong(i), e2el.applyAsLong(i)));
        }
        return w;
    }

    @Test
    void steadyThroughputLeavesOutTheFirstResponseWaitAndTheDrain() {
        // Every request takes 2 s: 100 requests in an 11.9 s window, but the server keeps up with the 10 req/s sent.
        MeasuredWindow w = tenPerSecond(i -> SECOND, i -> 2 * SECOND);
        double wholeRun = w.stats().completed() / (w.durationNanos() / 1e9);
        assertTrue(wholeRun < 0.9 * 10, "over the whole window " + wholeRun + " req/s");
        assertEquals(100 / 9.9, w.stats().steadySendRate(), 1e-9);
        assertEquals(w.stats().steadySendRate(), w.stats().steadyRequestThroughput(), 1e-9);
    }

    @Test
    void timeSeriesBucketsEndWithTheWindowSoTheLastOneIsNotReadAsAFullSecond() {
        // Sends over 9.9 s, every request 2 s long: the window is 11.9 s, its last bucket 0.9 s with 10 completions.
        MeasuredWindow w = tenPerSecond(i -> SECOND, i -> 2 * SECOND);
        ClientKeys.TimeSeries t = w.timeSeries();
        java.util.List<Double> length = t.bucketS();
        assertEquals(12, length.size());
        assertEquals(1.0, length.get(0), 1e-9);
        assertEquals(0.9, length.get(11), 1e-9);
        java.util.List<Long> completed = t.completed();
        assertEquals(10, completed.get(11), "completions at 11.0-11.9 s");
        assertEquals(100, completed.stream().mapToLong(Long::longValue).sum());
    }

    @Test
    void steadyThroughputIsNotFooledByLongOutputs() {
        // TTFT 0.1 s; every other request streams for 5 s. Completions before the last send fall well short of the
        // sends, though the server keeps up; first tokens do not.
        MeasuredWindow w = tenPerSecond(i -> SECOND / 10, i -> i % 2 == 0 ? 3 * SECOND / 10 : 5 * SECOND);
        assertEquals(w.stats().steadySendRate(), w.stats().steadyRequestThroughput(), 1e-9);
    }

    @Test
    void steadyThroughputFallsBehindTheSendsWhenTtftGrows() {
        // A saturated server: request i waits 50 ms more than request i - 1, so it takes in 1 / 0.15 s = 6.7 req/s.
        MeasuredWindow w = tenPerSecond(i -> SECOND / 10 + i * SECOND / 20, i -> 2 * SECOND + i * SECOND / 20);
        double ratio = w.stats().steadyRequestThroughput() / w.stats().steadySendRate();
        assertTrue(ratio > 0.5 && ratio < 0.75, "taken in / sent = " + ratio);
    }

    @Test
    void steadyThroughputIsUnknownBeforeSendingEndedOrWithoutASuccess() {
        MeasuredWindow w = new MeasuredWindow(0, 0, GoodputSlo.NONE, null, true);
        w.record(completed(0, 0, 3 * SECOND));
        assertTrue(Double.isNaN(w.stats().steadyRequestThroughput()));
        assertTrue(Double.isNaN(w.stats().steadySendRate()));
        MeasuredWindow none = new MeasuredWindow(0, 0, GoodputSlo.NONE, null, true);
        none.sendingEnded(SECOND);
        assertTrue(Double.isNaN(none.stats().steadyRequestThroughput()));
    }
}
