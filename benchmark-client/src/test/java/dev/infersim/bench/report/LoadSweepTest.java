package dev.infersim.bench.report;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoadSweepTest {

    /** A point of a 100 s run: its throughput, median TTFT and goodput (null without a goodput SLO). */
    private static LoadSweep.Point point(double load, double throughput, double medianTtft, Double goodput) {
        return point(load, throughput, medianTtft, goodput, null, null, null);
    }

    private static LoadSweep.Point point(double load, double throughput, double medianTtft, Double goodput,
                                         Double steadyThroughput, Double steadySendRate, Boolean valid) {
        return new LoadSweep.Point(load, new LoadSweep.Figures(throughput, steadyThroughput, steadySendRate, goodput,
                null, medianTtft, null, null, null, null, null, Math.round(throughput * 100), 0L, valid), 100.0, null,
                null);
    }

    @Test
    void rateKneeIsWhereThroughputStopsFollowingTheOfferedRate() {
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(
                point(1, 1.0, 50, 1.0), point(2, 2.0, 55, 1.95), point(4, 3.96, 60, 3.0),
                point(8, 5.0, 120, 1.0)), 0.9);
        assertEquals(8.0, s.kneeLoad());
        assertTrue(s.kneeReason().contains("below 90%"));
        assertEquals(2.0, s.maxLoadMeetingSlo(), "4 req/s meets the SLO for only 3/3.96 = 76% of requests");
        assertEquals(java.util.Arrays.asList(4.0, 8.0), s.kneeLoadInterval(), "between the last load that kept up and the knee");
    }

    /**
     * 195 of 200 requests met the SLO at 2 req/s (97.5%, interval 94.3-99.2%: surely above 90%); 186 of 200 at 4 req/s
     * (93%, interval 88.6-96.1%: it may be either side of 90%); 100 of 200 at 8 req/s (surely below).
     */
    @Test
    void theHighestLoadMeetingTheSloHasAnIntervalFromEachPointsAttainment() {
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(
                point(2, 2.0, 50, 1.95), point(4, 2.0, 50, 1.86), point(8, 2.0, 60, 1.0)), 0.9);
        assertEquals(4.0, s.maxLoadMeetingSlo());
        assertEquals(java.util.Arrays.asList(2.0, 4.0), s.maxLoadMeetingSloInterval());
        List<Double> ci = s.points().get(1).sloAttainmentCi95();
        assertEquals(0.886, ci.get(0), 0.001);
        assertEquals(0.961, ci.get(1), 0.001);
    }

    /** Adds the throughput measured while requests were still being sent, as the benchmark client reports it. */
    private static LoadSweep.Point whileSending(LoadSweep.Point p, double steadyThroughput) {
        LoadSweep.Figures f = p.figures();
        return point(p.load(), f.requestThroughput(), f.medianTtftMs(), f.requestGoodput(), steadyThroughput,
                f.steadySendRate(), f.valid());
    }

    @Test
    void rateKneeJudgesThroughputWhileSendingNotTheDrainAfterIt() {
        // At 4 req/s the whole-run figure is 80% of the offered rate only because the short run's duration includes
        // draining its last requests; while sending, completions kept up. At 8 req/s they did not.
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(
                whileSending(point(1, 0.8, 50, null), 1.0), whileSending(point(4, 3.2, 55, null), 3.98),
                whileSending(point(8, 4.4, 70, null), 5.0)), 0.9);
        assertEquals(8.0, s.kneeLoad());
        assertTrue(s.kneeReason().contains("achieved 5.00 req/s"), s.kneeReason());
    }

    @Test
    void rateKneeComparesCompletionsWithWhatTheScheduleActuallyOffered() {
        // A short Poisson schedule at nominal 10 req/s happened to offer 8.5 req/s; completions kept up with that. At
        // nominal 20 req/s it offered 21 and completions fell behind.
        LoadSweep.Point light = point(10, 8.4, 50, null, 8.4, 8.5, null);
        LoadSweep.Point heavy = point(20, 15.0, 60, null, 16.0, 21.0, null);
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(light, heavy), 0.9);
        assertEquals(20.0, s.kneeLoad());
        assertTrue(s.kneeReason().contains("offered 21.00 req/s"), s.kneeReason());
    }

    @Test
    void aPointThatMeasuredNothingIsTheKneeAndMissesTheSlo() {
        LoadSweep.Point failed = LoadSweep.Point.unmeasured(2, "the initial test request failed: http_503");
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(point(1, 1.0, 50, 1.0), failed),
                0.9);
        assertEquals(2.0, s.kneeLoad());
        assertTrue(s.kneeReason().contains("http_503"), s.kneeReason());
        assertEquals(1.0, s.maxLoadMeetingSlo());
    }

    @Test
    void rateKneeAlsoTriggersOnTtftBlowUp() {
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(
                point(1, 1.0, 50, null), point(2, 2.0, 200, null)), 0.9);
        assertEquals(2.0, s.kneeLoad());
        assertNull(s.maxLoadMeetingSlo(), "no goodput SLO, no SLO verdict");
    }

    @Test
    void concurrencyKneeIsWhereExtraUsersStopAddingThroughput() {
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.MAX_CONCURRENCY, List.of(
                point(1, 10, 50, null), point(2, 19.5, 52, null), point(4, 36, 60, null),
                point(8, 40, 100, null)), 0.9);
        assertEquals(8.0, s.kneeLoad(), "4 -> 8 users gained 11% where linear scaling gives 100%");
    }

    @Test
    void concurrencyKneeJudgesThroughputWhileEveryUserWasBusyNotTheDrain() {
        // The same 200 requests at every concurrency: the drain after the last send, with fewer and fewer users left,
        // weighs more the more users there are, so whole-run throughput flattens though the loop itself scales.
        LoadSweep.Point light = point(32, 12.1, 50, null, 12.9, null, null);
        LoadSweep.Point heavy = point(64, 17.5, 60, null, 20.1, null, null);
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.MAX_CONCURRENCY, List.of(light, heavy), 0.9);
        assertNull(s.kneeLoad(), "32 -> 64 users gained 56% while sending, though only 45% over the whole run");
    }

    @Test
    void noKneeWhenEveryPointScales() {
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(
                point(1, 1.0, 50, null), point(2, 2.0, 50, null)), 0.9);
        assertNull(s.kneeLoad());
    }

    @Test
    void anInvalidRunCannotVouchForTheLoadMeetingTheSlo() {
        LoadSweep.Point invalid = point(2, 2.0, 55, 2.0, null, null, false);
        LoadSweep.Summary s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(point(1, 1.0, 50, 1.0), invalid),
                0.9);
        assertEquals(1.0, s.maxLoadMeetingSlo(), "the 2 req/s run met the SLO but its numbers are not trusted");
        assertEquals(List.of(2.0), s.invalidLoads());
    }
}
