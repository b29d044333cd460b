package dev.infersim.bench.harness;

import dev.infersim.bench.harness.HarnessResults.Measured;
import dev.infersim.bench.harness.RequestMatcher.Matching;
import dev.infersim.bench.harness.RequestMatcher.Pair;
import dev.infersim.bench.harness.TruthTimeline.Row;
import dev.infersim.bench.measure.ArrivalFit;
import dev.infersim.common.SplitMix64;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.infersim.bench.harness.RequestMatcherTest.measured;
import static dev.infersim.bench.harness.RequestMatcherTest.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Each finding of the catalogue on made-up runs whose truth is known, with fixed seeds: named when it happened, not else. */
class HarnessFindingsTest {
    private static final HarnessTarget POISSON_10 = new HarnessTarget(10, HarnessTarget.Process.POISSON, 1, 0, 0);
    private static final HarnessTarget CONSTANT_10 = new HarnessTarget(10, HarnessTarget.Process.CONSTANT, Double.NaN, 0, 0);

    /** Instants (ms) of a Poisson process at {@code rate}, one generator. */
    private static double[] poisson(double rate, int n, long seed) {
        SplitMix64 rng = new SplitMix64(seed);
        double[] t = new double[n];
        for (int i = 1; i < n; i++) {
            t[i] = t[i - 1] + exponentialGapMs(rng, rate);
        }
        return t;
    }

    private static double exponentialGapMs(SplitMix64 rng, double rate) {
        return -Math.log(1 - rng.nextDouble()) / rate * 1e3;
    }

    /** GuideLLM's schedule: {@code workers} processes each draw gaps from a generator seeded alike, onto one timeline. */
    private static double[] sameSeedInEveryWorker(double rate, int n, int workers) {
        SplitMix64[] rngs = new SplitMix64[workers];
        for (int w = 0; w < workers; w++) {
            rngs[w] = new SplitMix64(42);
        }
        double[] t = new double[n];
        for (int i = 1; i < n; i++) {
            t[i] = t[i - 1] + exponentialGapMs(rngs[i % workers], rate);
        }
        return t;
    }

    @Test
    void aPoissonRunAtTheRequestedRateShowsNoRateOrArrivalFinding() {
        double[] arrivals = poisson(10, 400, 1);
        assertNull(HarnessFindings.rateOffTarget(arrivals, POISSON_10));
        assertNull(HarnessFindings.arrivalProcessOff(arrivals, POISSON_10));
        assertNull(HarnessFindings.repeatedScheduleGaps(arrivals, POISSON_10));
    }

    @Test
    void theRateIsNamedOffInEitherDirectionBeyondThreeStandardErrors() {
        // 200 Poisson gaps: the rate's standard error is 1/sqrt(199) = 7%, so the tolerance is 21%.
        HarnessFinding fast = HarnessFindings.rateOffTarget(poisson(15.65, 200, 2), POISSON_10);
        assertNotNull(fast);
        assertEquals(0.2127, fast.evidence().get("tolerance"), 1e-4);
        assertTrue(fast.cause().startsWith("The harness sends faster"), fast.cause());
        HarnessFinding slow = HarnessFindings.rateOffTarget(poisson(7, 200, 3), POISSON_10);
        assertNotNull(slow);
        assertTrue(slow.cause().startsWith("The harness sends slower"), slow.cause());
        assertNull(HarnessFindings.rateOffTarget(poisson(11, 200, 4), POISSON_10));
        // A constant rate has no sampling error: 5%.
        double[] even = new double[100];
        for (int i = 0; i < even.length; i++) {
            even[i] = i * 1e3 / 10.8;
        }
        assertNotNull(HarnessFindings.rateOffTarget(even, CONSTANT_10));
        assertNull(HarnessFindings.arrivalProcessOff(even, CONSTANT_10));
    }

    @Test
    void workersThatShareASeedRepeatTheirScheduledGaps() {
        double[] schedule = sameSeedInEveryWorker(10, 200, 10);
        HarnessFinding repeats = HarnessFindings.repeatedScheduleGaps(schedule, POISSON_10);
        assertNotNull(repeats);
        // Every gap a worker draws, nine others draw too; two workers' turns are one short at the end.
        assertEquals(10, repeats.evidence().get("most_repeated_count"));
        assertEquals(199, repeats.evidence().get("gaps_in_repeats"));
        // Twenty exponential draws, each ten times: Kolmogorov-Smirnov cannot see the repeats; the count of repeats can.
    }

    @Test
    void poissonSendsWhereConstantWasAskedAreNamed() {
        HarnessFinding f = HarnessFindings.arrivalProcessOff(poisson(10, 200, 5), CONSTANT_10);
        assertNotNull(f);
        assertTrue(f.evidence().get("gap_cv") > ArrivalFit.CONSTANT_CV);
    }

    @Test
    void tokensReadTogetherAfterEvenServerGapsAreEventLoopStalls() {
        List<Pair> even = new ArrayList<>();
        List<Pair> bunched = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Row t = row("r" + i, 1000 * i, 20, 10, 11, 30);
            Measured m = measured(t, "r" + i, 1, true);
            even.add(new Pair(m, t, false));
            double[] late = m.itlsMs().clone();
            if (i % 2 == 0) {
                // Five gaps' tokens waited in the socket and were read at once.
                late[0] = 50;
                for (int k = 1; k < 5; k++) {
                    late[k] = 0.01;
                }
            }
            bunched.add(new Pair(new Measured(m.requestId(), m.startMs(), m.firstTokenMs(), m.ttftMs(), m.e2elMs(),
                    m.tpotMs(), late, m.chunks(), m.promptTokens(), m.outputTokens()), t, false));
        }
        assertNull(HarnessFindings.eventLoopStalls(even));
        HarnessFinding f = HarnessFindings.eventLoopStalls(bunched);
        assertNotNull(f);
        assertEquals(20, f.evidence().get("bunched_gaps"));
        assertEquals(100, f.evidence().get("compared_gaps"));
        assertEquals(5, f.evidence().get("requests_affected"));
        assertEquals(40, f.evidence().get("max_gap_excess_ms"), 1e-9);
    }

    @Test
    void moreInFlightThanTheCapIsNamed() {
        List<Pair> pairs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Row t = row("r" + i, 1000 + 10 * i, 20, 10, 11, 30);
            pairs.add(new Pair(measured(t, "r" + i, 1, true), t, false));
        }
        HarnessTarget capTwo = new HarnessTarget(Double.NaN, HarnessTarget.Process.UNBOUNDED, Double.NaN, 2, 0);
        HarnessFinding f = HarnessFindings.concurrencyExceeded(pairs, capTwo);
        assertNotNull(f);
        assertEquals(3, f.evidence().get("max_in_flight"));
        HarnessTarget capThree = new HarnessTarget(Double.NaN, HarnessTarget.Process.UNBOUNDED, Double.NaN, 3, 0);
        assertNull(HarnessFindings.concurrencyExceeded(pairs, capThree));
    }

    @Test
    void warmupsAreCountedWhenFewerRequestsPrecedeTheFirstCountedOneThanWereAskedFor() {
        HarnessTarget twoWarmups = new HarnessTarget(10, HarnessTarget.Process.POISSON, 1, 0, 2);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            rows.add(row("r" + i, 1000 + 100 * i, 20, 10, 5, 30));
        }
        Pair second = new Pair(measured(rows.get(1), "r1", 1, true), rows.get(1), RequestMatcher.How.ID, false);
        Pair third = new Pair(measured(rows.get(2), "r2", 1, true), rows.get(2), RequestMatcher.How.ID, false);
        assertNotNull(HarnessFindings.warmupCounted(matching(List.of(second, third), rows), twoWarmups));
        assertNull(HarnessFindings.warmupCounted(matching(List.of(third), rows), twoWarmups));
    }

    @Test
    void outputCountsOfAnotherTokenizerFamilyAreNamedButAFewPercentAreNot() {
        List<Row> rows = new ArrayList<>();
        List<Pair> close = new ArrayList<>();
        List<Pair> far = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Row t = row("r" + i, 1000 + 100 * i, 20, 10, 20, 30);
            rows.add(t);
            Measured m = measured(t, "r" + i, 1, true);
            close.add(new Pair(recount(m, 18), t, RequestMatcher.How.ID, false));
            far.add(new Pair(recount(m, 25), t, RequestMatcher.How.ID, false));
        }
        assertNull(HarnessFindings.outputTokensDiffer(matching(close, rows)), "0.9 of the server's: one family");
        HarnessFinding f = HarnessFindings.outputTokensDiffer(matching(far, rows));
        assertNotNull(f);
        assertEquals(1.25, f.evidence().get("harness_over_server"), 1e-12);
    }

    @Test
    void aClockStartedAfterTheSendIsLateAndOneStartedBeforeItIsEarlyByItsFloorNotItsTail() {
        List<Pair> late = new ArrayList<>();
        List<Pair> early = new ArrayList<>();
        List<Pair> loaded = new ArrayList<>();
        SplitMix64 rng = new SplitMix64(9);
        for (int i = 0; i < 100; i++) {
            Row t = row("r" + i, 1000 + 100 * i, 20, 10, 5, 30);
            late.add(new Pair(measured(t, "r" + i, -3 - rng.nextDouble(), false), t, RequestMatcher.How.TEXT, false));
            early.add(new Pair(measured(t, "r" + i, 25 + 5 * rng.nextDouble(), false), t, RequestMatcher.How.TEXT, false));
            // A loaded machine: most requests lose 1 to 3 ms, one in ten 20 to 80 ms.
            double delay = i % 10 == 0 ? 20 + 60 * rng.nextDouble() : 1 + 2 * rng.nextDouble();
            loaded.add(new Pair(measured(t, "r" + i, delay, false), t, RequestMatcher.How.TEXT, false));
        }
        HarnessFinding f = HarnessFindings.clockStartedLate(late, List.of());
        assertNotNull(f);
        assertEquals(100, f.evidence().get("requests_short"));
        assertNull(HarnessFindings.clockStartedEarly(late));
        assertNotNull(HarnessFindings.clockStartedEarly(early));
        assertNull(HarnessFindings.clockStartedLate(early, List.of()));
        assertNull(HarnessFindings.clockStartedEarly(loaded), "a tail of late reads is the machine's, not the clock's");
        assertNull(HarnessFindings.clockStartedLate(loaded, List.of()));
    }

    @Test
    void aClockOfTenMillisecondTicksIsCoarseAndANanosecondOneIsNot() {
        List<Measured> fine = new ArrayList<>();
        List<Measured> coarse = new ArrayList<>();
        SplitMix64 rng = new SplitMix64(4);
        for (int i = 0; i < 50; i++) {
            Row t = row("r" + i, 1000 + 100 * i, 17 + rng.nextDouble(), 6.5, 8, 30);
            Measured exact = measured(t, null, 1 + rng.nextDouble(), false);
            // What a nanosecond clock reads: each gap a little off the server's.
            Measured m = new Measured(null, Double.NaN, Double.NaN, exact.ttftMs(), exact.e2elMs(), exact.tpotMs(),
                    java.util.Arrays.stream(exact.itlsMs()).map(v -> v + rng.nextDouble() * 0.3).toArray(), exact.chunks(),
                    exact.promptTokens(), exact.outputTokens());
            fine.add(m);
            double[] itls = java.util.Arrays.stream(m.itlsMs()).map(v -> 10 * Math.floor(v / 10 + rng.nextDouble()))
                    .toArray();
            coarse.add(new Measured(null, Double.NaN, Double.NaN, 10 * Math.ceil(m.ttftMs() / 10),
                    10 * Math.ceil(m.e2elMs() / 10), m.tpotMs(), itls, m.chunks(), m.promptTokens(), m.outputTokens()));
        }
        assertNull(HarnessFindings.coarseClock(fine));
        HarnessFinding f = HarnessFindings.coarseClock(coarse);
        assertNotNull(f);
        assertEquals(10, f.evidence().get("tick_ms"));
    }

    @Test
    void requestsTheServerAnsweredButTheHarnessDoesNotListAreDroppedBeyondItsDeclaredLead() {
        List<Row> rows = new ArrayList<>();
        List<Pair> all = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            Row t = row("r" + i, 1000 + 100 * i, 20, 10, 5, 30);
            rows.add(t);
            all.add(new Pair(measured(t, "r" + i, 1, true), t, RequestMatcher.How.ID, false));
        }
        HarnessResults.Results oneTest = new HarnessResults.Results(List.of(), 0, POISSON_10, new double[0], 1);
        assertNull(HarnessFindings.requestsDropped(matching(all.subList(1, 50), rows), oneTest), "its test request");
        HarnessFinding warmup = HarnessFindings.requestsDropped(matching(all.subList(6, 50), rows), oneTest);
        assertNotNull(warmup);
        assertEquals(5, warmup.evidence().get("ahead_undeclared"));
        assertTrue(warmup.cause().contains("undeclared warm-up"), warmup.cause());
        List<Pair> gap = new ArrayList<>(all.subList(1, 20));
        gap.addAll(all.subList(24, 50));
        HarnessFinding middle = HarnessFindings.requestsDropped(matching(gap, rows), oneTest);
        assertNotNull(middle);
        assertEquals(4, middle.evidence().get("in_run"));
        assertTrue(middle.cause().contains("drops requests"), middle.cause());
        HarnessResults.Results fourFailed = new HarnessResults.Results(List.of(), 4, POISSON_10, new double[0], 1);
        assertNull(HarnessFindings.requestsDropped(matching(gap, rows), fourFailed), "the four it counts as failed");
    }

    @Test
    void aRequestAnsweredOnlyAfterARefusedAttemptIsAHiddenRetryButAPromptSentTwiceIsNot() {
        List<Row> rows = List.of(attempt(row("r0", 1000, 20, 10, 5, 30), "p0", 1),
                attempt(row("r1", 1100, 20, 10, 5, 30), "p1", 2),
                attempt(row("r2", 1200, 20, 10, 5, 30), "p2", 1),
                attempt(row("r3", 1300, 20, 10, 5, 30), "p2", 2));
        List<Pair> pairs = rows.stream().map(t -> new Pair(measured(t, t.requestId(), 1, true), t, RequestMatcher.How.ID,
                false)).toList();
        HarnessFinding f = HarnessFindings.hiddenRetries(pairs, rows, 0);
        assertNotNull(f);
        assertEquals(1, f.evidence().get("requests_retried"), "r1's first attempt was refused; r3's prompt was r2's too");
        assertNull(HarnessFindings.hiddenRetries(pairs, rows, 1), "the one failure the harness counts");
    }

    private static Row attempt(Row r, String prompt, int attempt) {
        return new Row(r.requestId(), r.index(), r.arrivalMs(), r.firstTokenMs(), r.finishedMs(), r.tokenTimesMs(),
                r.promptTokens(), r.completionTokens(), r.finishReason(), Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                null, null, prompt, attempt);
    }

    private static Matching matching(List<Pair> pairs, List<Row> truth) {
        return new Matching(pairs, pairs.size(), truth, RequestMatcher.CountFit.of(pairs.stream()
                .map(p -> new int[]{p.m().outputTokens(), p.t().completionTokens()}).toList()), RequestMatcher.CountFit.NONE);
    }

    private static Measured recount(Measured m, int outputTokens) {
        return new Measured(m.requestId(), m.startMs(), m.firstTokenMs(), m.ttftMs(), m.e2elMs(), m.tpotMs(), m.itlsMs(),
                m.chunks(), m.promptTokens(), outputTokens);
    }
}
