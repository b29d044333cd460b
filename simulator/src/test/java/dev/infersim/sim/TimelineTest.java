package dev.infersim.sim;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TimelineTest {

    @Test
    void keepsABoundedEvenlySpacedSampleOfAnyRunLength() {
        Timeline t = new Timeline(0, 10, 64);
        while (t.nextSampleNanos() <= 100_000) {       // a run of 100,000 ns sampled every 10 ns to begin with
            long now = t.nextSampleNanos();
            t.sample(now / 10, 1, 0, 1, 0.5, 1, 1);
        }
        assertTrue(t.size() >= 32 && t.size() <= 64, "size " + t.size());
        assertEquals(10 * 256, t.intervalNanos(), "the interval doubled each time the buffer filled");
        for (int i = 0; i < t.size(); i++) {
            assertEquals(i * t.intervalNanos(), t.timeNanos(i));
            assertEquals(i * t.intervalNanos() / 10, t.arrivals(i), "each kept point keeps its own values");
        }
        assertEquals(t.size() * t.intervalNanos(), t.nextSampleNanos());
    }

    @Test
    void fitsTheQueueTrendWithoutTheRunningBatch() {
        Timeline t = new Timeline(0, 1_000_000_000L, 64);
        for (int i = 0; i < 20; i++) {
            int running = i % 2 == 0 ? 8 : 0;          // swings, but is not a queue
            t.sample(0, running, 3 * i, running + 3 * i, 0, 0, 0);
        }
        Timeline.QueueTrend trend = t.fitQueued(0, 19_000_000_000L);
        assertEquals(3.0, trend.slopePerS(), 1e-9);
        assertEquals(3 / Math.sqrt(2), trend.jitter(), 1e-9, "steps of 3 between samples");
    }
}
