package dev.infersim.bench.measure;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TimingErrorTest {
    private static final long MS = 1_000_000;

    @Test
    void aFewMillisecondsOfLagBesideFortyMillisecondTtftsLeaveTheRunValid() {
        // the README's bench example on a quiet 2-core machine: lag p99 6.2 ms, TTFT p50 40.5 ms, 12 ms token gaps
        TimingError t = TimingError.judge(6_200_000, 800_000, 40_500_000, 12 * MS);
        assertFalse(t.material(), t.describe());
        assertTrue(t.describe().contains("17% of TTFT p50 40.50 ms") && t.describe().contains("the server's"),
                t.describe());
    }

    @Test
    void anErrorNearTheTtftItselfMakesTheTtftsTheClients() {
        TimingError t = TimingError.judge(24 * MS, 20 * MS, 45 * MS, 11 * MS);
        assertTrue(t.ttftMaterial() && t.itlMaterial(), t.describe());
        assertTrue(t.describe().contains("TTFT and ITL measure this client"), t.describe());
    }

    @Test
    void readDelayBesideShortTokenGapsMakesOnlyItlTheClients() {
        // time scale 10: 0.8 ms token gaps, 20 ms TTFTs
        TimingError t = TimingError.judge(MS / 2, MS, 20 * MS, 800_000);
        assertFalse(t.ttftMaterial(), t.describe());
        assertTrue(t.itlMaterial(), t.describe());
        assertTrue(t.describe().contains(": ITL measure"), t.describe());
    }

    @Test
    void withoutAScheduleOnlyTheReadDelayCounts() {
        TimingError t = TimingError.judge(-1, 2 * MS, 10 * MS, 20 * MS);
        assertFalse(t.material(), t.describe());
        assertTrue(t.describe().contains("no schedule to lag behind"), t.describe());
    }

    @Test
    void theShareIsJudgedAtItsStatedBoundary() {
        assertFalse(TimingError.judge(MS, 1_500_000, 10 * MS, 100 * MS).material());
        assertTrue(TimingError.judge(MS, 1_500_001, 10 * MS, 100 * MS).material());
    }
}
