package dev.infersim.result;

import org.HdrHistogram.Histogram;
import org.apache.commons.math3.distribution.NormalDistribution;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The percentile intervals' coverage where the truth is known: how often a 95% interval from one run holds the
 * population's percentile, over many runs of fixed seeds.
 */
class PercentileIntervalTest {
    private static final int RUNS = 400;

    /** Independent exponential latencies (mean 20 ms): both p50 and p99 intervals cover about 95% of the time. */
    @Test
    void independentSamplesAreCoveredAboutNinetyFivePercentOfTheTime() {
        SplittableRandom rng = new SplittableRandom(3);
        double[] covered = new double[2];
        double[] percentiles = {50, 99};
        for (int run = 0; run < RUNS; run++) {
            LatencyStats stats = new LatencyStats();
            for (int i = 0; i < 2_000; i++) {
                stats.record((long) (-20e6 * Math.log(1 - rng.nextDouble())));
            }
            for (int k = 0; k < 2; k++) {
                double truthMs = -20 * Math.log(1 - percentiles[k] / 100);
                covered[k] += stats.percentileInterval(percentiles[k]).contains(truthMs) ? 1 : 0;
            }
        }
        for (int k = 0; k < 2; k++) {
            double coverage = covered[k] / RUNS;
            assertTrue(coverage >= 0.92 && coverage <= 0.995, "p" + percentiles[k] + " coverage " + coverage);
        }
    }

    /**
     * Latencies that drift together, as in a queue near saturation (a lognormal whose log is an AR(1) process with
     * lag-one correlation 0.98): intervals that assume independence cover the true p50 and p90 only a minority of the
     * time; sectioning keeps them near 95%.
     */
    @Test
    void correlatedSamplesWidenTheIntervalSoItStillCovers() {
        SplittableRandom rng = new SplittableRandom(5);
        NormalDistribution normal = new NormalDistribution(null, 0, 1);
        double phi = 0.98;
        double[] percentiles = {50, 90};
        double[] sectioned = new double[2];
        double[] independent = new double[2];
        for (int run = 0; run < RUNS; run++) {
            LatencyStats stats = new LatencyStats();
            Histogram copy = new Histogram(1, 3_600_000_000_000L, 3);
            double a = normal.inverseCumulativeProbability(rng.nextDouble());
            long max = 0;
            for (int i = 0; i < 4_000; i++) {
                a = phi * a + Math.sqrt(1 - phi * phi) * normal.inverseCumulativeProbability(rng.nextDouble());
                long nanos = (long) (50e6 * Math.exp(0.5 * a));
                stats.record(nanos);
                copy.recordValue(nanos);
                max = Math.max(max, nanos);
            }
            for (int k = 0; k < 2; k++) {
                double truthMs = 50 * Math.exp(0.5 * normal.inverseCumulativeProbability(percentiles[k] / 100));
                sectioned[k] += stats.percentileInterval(percentiles[k]).contains(truthMs) ? 1 : 0;
                independent[k] += PercentileSections.independent(copy, percentiles[k], max).contains(truthMs) ? 1 : 0;
            }
        }
        for (int k = 0; k < 2; k++) {
            assertTrue(independent[k] / RUNS < 0.5, "p" + percentiles[k] + " independent coverage " + independent[k] / RUNS);
            assertTrue(sectioned[k] / RUNS >= 0.85, "p" + percentiles[k] + " sectioned coverage " + sectioned[k] / RUNS);
        }
    }

    /** A run whose latencies only grow (a queue filling up) has no stable percentile: the interval says so. */
    @Test
    void aTrendWidensTheIntervalFarBeyondIndependentSampling() {
        LatencyStats stats = new LatencyStats();
        Histogram copy = new Histogram(1, 3_600_000_000_000L, 3);
        for (int i = 1; i <= 1_000; i++) {
            stats.record(i * 1_000_000L);
            copy.recordValue(i * 1_000_000L);
        }
        PercentileInterval sectioned = stats.percentileInterval(50);
        PercentileInterval independent = PercentileSections.independent(copy, 50, 1_000_000_000L);
        assertTrue(sectioned.highMs() - sectioned.lowMs() > 5 * (independent.highMs() - independent.lowMs()),
                sectioned + " vs " + independent);
    }

    @Test
    void tooFewSamplesCannotBoundAHighPercentileFromAbove() {
        LatencyStats stats = new LatencyStats();
        SplittableRandom rng = new SplittableRandom(7);
        for (int i = 1; i <= 100; i++) {
            stats.record(rng.nextLong(1_000_000L, 100_000_000L));
        }
        PercentileInterval p99 = stats.percentileInterval(99);
        assertFalse(p99.bounded(), p99.toString());
        assertNull(p99.toJson().get(1), "unbounded is null in JSON");
        PercentileInterval p50 = stats.percentileInterval(50);
        assertTrue(p50.bounded() && p50.lowMs() < stats.percentileMs(50) && p50.highMs() > stats.percentileMs(50)
                && p50.highMs() - p50.lowMs() < 40, p50.toString());
    }

    @Test
    void batchesOfEqualSamplesAndRestoredStatisticsStillHaveIntervals() {
        LatencyStats stats = new LatencyStats();
        SplittableRandom rng = new SplittableRandom(9);
        for (int i = 0; i < 5_000; i++) {
            stats.record(rng.nextLong(1_000_000L, 6_000_000L), 1 + i % 64);
        }
        PercentileInterval p99 = stats.percentileInterval(99);
        assertTrue(p99.contains(stats.percentileMs(99)) && p99.bounded(), p99.toString());
        LatencyStats restored = LatencyStats.restored(stats.histogram(), stats.meanMs(), stats.stdMs());
        PercentileInterval fromLog = restored.percentileInterval(99);
        assertTrue(fromLog.contains(restored.percentileMs(99)), fromLog.toString());
        assertNull(new LatencyStats().percentileInterval(50));
        assertEquals(stats.percentileMs(99), restored.percentileMs(99), 1e-9);
    }
}
