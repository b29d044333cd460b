package dev.infersim.bench;

import dev.infersim.bench.HarnessResults.Measured;
import dev.infersim.bench.RequestMatcher.Matching;
import dev.infersim.bench.RequestMatcher.Pair;
import dev.infersim.bench.TruthTimeline.Row;
import dev.infersim.common.SplitMix64;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.infersim.bench.RequestMatcherTest.measured;
import static dev.infersim.bench.RequestMatcherTest.row;
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
        Matching one = new Matching("request id", List.of(), 0, 10, 1, 0);
        Matching two = new Matching("request id", List.of(), 0, 10, 2, 0);
        assertNotNull(HarnessFindings.warmupCounted(one, twoWarmups));
        assertNull(HarnessFindings.warmupCounted(two, twoWarmups));
    }

    @Test
    void outputCountsByAnotherTokenizerAreNamedWithTheirRatio() {
        Row t = row("a", 1000, 20, 10, 11, 30);
        Measured m = measured(t, "a", 1, true);
        Measured recounted = new Measured("a", m.startMs(), m.firstTokenMs(), m.ttftMs(), m.e2elMs(), m.tpotMs(),
                m.itlsMs(), m.chunks(), m.promptTokens(), 13);
        assertNull(HarnessFindings.tokensDiffer(List.of(new Pair(m, t, false)), true));
        HarnessFinding f = HarnessFindings.tokensDiffer(List.of(new Pair(recounted, t, false)), true);
        assertNotNull(f);
        assertEquals(13 / 11.0, f.evidence().get("harness_over_server"), 1e-12);
    }
}
