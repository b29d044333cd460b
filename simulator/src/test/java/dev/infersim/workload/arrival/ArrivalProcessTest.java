package dev.infersim.workload.arrival;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.infersim.common.SplitMix64;
import org.apache.commons.math3.distribution.ExponentialDistribution;
import org.apache.commons.math3.distribution.GammaDistribution;
import org.apache.commons.math3.stat.descriptive.SummaryStatistics;
import org.apache.commons.math3.stat.inference.KolmogorovSmirnovTest;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ArrivalProcessTest {

    private static final int GAPS = 40_000;

    /** Gaps in seconds. */
    private static double[] gapsSeconds(ArrivalProcess process, int n) {
        double[] gaps = new double[n];
        long previous = 0;
        for (int i = 0; i < n; i++) {
            long t = process.nextArrivalNanos();
            gaps[i] = (t - previous) / 1e9;
            previous = t;
        }
        return gaps;
    }

    private static SummaryStatistics stats(double[] values) {
        SummaryStatistics s = new SummaryStatistics();
        for (double v : values) {
            s.addValue(v);
        }
        return s;
    }

    @Test
    void poissonGapsAreExponentialWithMeanOneOverRate() {
        double rate = 10;
        double[] gaps = gapsSeconds(GammaArrivals.poisson(rate, new SplitMix64(1)), GAPS);
        SummaryStatistics s = stats(gaps);
        // Standard error of the mean is 0.1/sqrt(40000) = 0.5%; 2% is 4 standard errors.
        assertEquals(0.1, s.getMean(), 0.1 * 0.02);
        assertEquals(1.0, s.getStandardDeviation() / s.getMean(), 0.03, "coefficient of variation");
        double p = new KolmogorovSmirnovTest().kolmogorovSmirnovTest(new ExponentialDistribution(null, 1 / rate), gaps);
        assertTrue(p > 0.01, "KS test against Exp(mean 0.1 s) rejects with p = " + p);
    }

    @ParameterizedTest
    @ValueSource(doubles = {0.25, 0.5, 2.0, 4.0})
    void gammaGapsHaveCoefficientOfVariationOneOverRootShape(double burstiness) {
        double rate = 5;
        double[] gaps = gapsSeconds(new GammaArrivals(rate, burstiness, new SplitMix64(7)), GAPS);
        SummaryStatistics s = stats(gaps);
        double cv = s.getStandardDeviation() / s.getMean();
        assertEquals(1 / rate, s.getMean(), 0.03 / rate, "mean gap stays 1/rate whatever the burstiness");
        assertEquals(1 / Math.sqrt(burstiness), cv, 0.04 / Math.sqrt(burstiness), "CV = 1/sqrt(shape)");
        GammaDistribution law = new GammaDistribution(null, burstiness, 1 / (rate * burstiness),
                GammaDistribution.DEFAULT_INVERSE_ABSOLUTE_ACCURACY);
        double p = new KolmogorovSmirnovTest().kolmogorovSmirnovTest(law, gaps);
        assertTrue(p > 0.01, "KS test against Gamma(" + burstiness + ") rejects with p = " + p);
    }

    @Test
    void constantArrivalsAreEvenlySpacedStartingAfterOneGap() {
        ArrivalProcess process = new ConstantArrivals(4);
        assertEquals(250_000_000L, process.nextArrivalNanos());
        assertEquals(500_000_000L, process.nextArrivalNanos());
        assertEquals(750_000_000L, process.nextArrivalNanos());
    }

    @Test
    void infiniteRateSendsEverythingAtTimeZero() {
        ArrivalProcess process = LoadPattern.immediate().arrivals(100, 3);
        for (int i = 0; i < 100; i++) {
            assertEquals(0L, process.nextArrivalNanos());
        }
    }

    @Test
    void fixedRateScheduleIsScaledSoTheLastRequestArrivesAtNOverRateLikeVllm() {
        ArrivalProcess process = LoadPattern.poisson(5).arrivals(1000, 11);
        long last = 0;
        for (int i = 0; i < 1000; i++) {
            last = process.nextArrivalNanos();
        }
        assertEquals(200e9, last, 2.0, "1000 requests at 5 req/s end at 200 s");
    }

    @Test
    void unnormalizedScheduleIsTheRawRenewalProcess() {
        ArrivalProcess fromPattern = LoadPattern.poisson(5).withNormalizeDuration(false).arrivals(1000, 11);
        ArrivalProcess direct = GammaArrivals.poisson(5, new SplitMix64(11));
        for (int i = 0; i < 100; i++) {
            assertEquals(direct.nextArrivalNanos(), fromPattern.nextArrivalNanos());
        }
    }

    @Test
    void countRampGivesRequestIItsVllmRate() {
        int n = 101;
        RampUp linear = RampUp.overRequests(RampStrategy.LINEAR, 1, 11);
        RampUp exponential = RampUp.overRequests(RampStrategy.EXPONENTIAL, 1, 100);
        ArrivalProcess lin = new CountRampArrivals(linear, n, Double.POSITIVE_INFINITY, new SplitMix64(1));
        ArrivalProcess exp = new CountRampArrivals(exponential, n, Double.POSITIVE_INFINITY, new SplitMix64(1));
        double linNow = 0;
        double expNow = 0;
        for (int i = 0; i < n; i++) {
            double progress = i / 100.0;
            linNow += 1e9 / (1 + 10 * progress);
            expNow += 1e9 / Math.pow(100, progress);
            assertEquals(Math.round(linNow), lin.nextArrivalNanos(), 1.0, "linear request " + i);
            assertEquals(Math.round(expNow), exp.nextArrivalNanos(), 1.0, "exponential request " + i);
        }
    }

    @Test
    void countRampWithPoissonGapsAveragesToTheRampRate() {
        int n = 200_000;
        RampUp ramp = RampUp.overRequests(RampStrategy.LINEAR, 10, 30);
        ArrivalProcess process = new CountRampArrivals(ramp, n, 1.0, new SplitMix64(5));
        double[] gaps = gapsSeconds(process, n);
        // Expected total time: sum of 1/r_i; compare the second half of the ramp, where r runs 20..30.
        double expected = 0;
        double observed = 0;
        for (int i = n / 2; i < n; i++) {
            expected += 1 / ramp.rateForRequest(i, n);
            observed += gaps[i];
        }
        assertEquals(expected, observed, expected * 0.01);
    }

    @Test
    void timedLinearRampFollowsTheIntegratedRate() {
        // 0 -> 100 req/s over 100 s, then 100 req/s: Lambda(50 s) = 100 * 50^2 / 200 = 1250, Lambda(100 s) = 5000,
        // Lambda(120 s) = 7000. Poisson counts: sd = sqrt(Lambda); tolerance 4 sd.
        RampUp ramp = RampUp.overDuration(RampStrategy.LINEAR, 0, 100, 100_000_000_000L);
        int[] counts = countBefore(new TimedRampArrivals(ramp, 1.0, new SplitMix64(9)), 50e9, 100e9, 120e9);
        assertEquals(1250, counts[0], 4 * Math.sqrt(1250));
        assertEquals(5000, counts[1], 4 * Math.sqrt(5000));
        assertEquals(7000, counts[2], 4 * Math.sqrt(7000));
    }

    @Test
    void timedExponentialRampFollowsTheIntegratedRate() {
        // 1 -> 100 req/s over 100 s: Lambda(t) = 100 (100^(t/100) - 1) / ln 100.
        RampUp ramp = RampUp.overDuration(RampStrategy.EXPONENTIAL, 1, 100, 100_000_000_000L);
        int[] counts = countBefore(new TimedRampArrivals(ramp, 1.0, new SplitMix64(9)), 50e9, 100e9);
        double at50 = 100 * (10 - 1) / Math.log(100);
        double at100 = 100 * (100 - 1) / Math.log(100);
        assertEquals(at50, counts[0], 4 * Math.sqrt(at50));
        assertEquals(at100, counts[1], 4 * Math.sqrt(at100));
    }

    @Test
    void diurnalArrivalsFollowTheIntegratedCosine() {
        // base 10 req/s, amplitude 0.5, period 200 s, peak at 50 s: Lambda(t) = 10 (t + 0.5 200/(2 pi) (sin(2 pi (t - 50)/200) + 1))
        RateSchedule diurnal = new RateSchedule(new RateSchedule.Diurnal(0.5, 200, 50), List.of());
        int[] counts = countBefore(new ScheduledArrivals(10, diurnal, 1.0, new SplitMix64(3)), 50e9, 100e9, 150e9, 200e9);
        double[] expected = new double[4];
        for (int i = 0; i < 4; i++) {
            double t = 50.0 * (i + 1);
            expected[i] = 10 * (t + 0.5 * 200 / (2 * Math.PI) * (Math.sin(2 * Math.PI * (t - 50) / 200) + 1));
            assertEquals(expected[i], diurnal.expectedArrivals(10, t), 1e-9);
            assertEquals(expected[i], counts[i], 4 * Math.sqrt(expected[i]), "t=" + t);
        }
        // the busiest quarter (around the peak) carries about 1.9x the quietest one (around the trough)
        assertTrue(counts[0] > 1.5 * (counts[2] - counts[1]), java.util.Arrays.toString(counts));
    }

    @Test
    void aBurstStepsTheRateForItsDuration() {
        RateSchedule burst = new RateSchedule(null, List.of(new RateSchedule.Burst(100, 20, 50)));
        assertEquals(50, burst.rateAt(5, 110));
        assertEquals(5, burst.rateAt(5, 120));
        int[] counts = countBefore(new ScheduledArrivals(5, burst, 1.0, new SplitMix64(4)), 100e9, 120e9, 200e9);
        assertEquals(500, counts[0], 4 * Math.sqrt(500));
        assertEquals(1500, counts[1], 4 * Math.sqrt(1500));
        assertEquals(1900, counts[2], 4 * Math.sqrt(1900));
        assertEquals(1900, burst.expectedArrivals(5, 200), 1e-9);
    }

    @Test
    void overlappingBurstsAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RateSchedule(null,
                List.of(new RateSchedule.Burst(10, 20, 5), new RateSchedule.Burst(25, 5, 9))));
        assertTrue(e.getMessage().startsWith("bursts overlap"), e.getMessage());
    }

    private static int[] countBefore(ArrivalProcess process, double... horizonsNanos) {
        int[] counts = new int[horizonsNanos.length];
        double last = horizonsNanos[horizonsNanos.length - 1];
        for (long t = process.nextArrivalNanos(); t < last; t = process.nextArrivalNanos()) {
            for (int h = 0; h < horizonsNanos.length; h++) {
                if (t < horizonsNanos[h]) {
                    counts[h]++;
                }
            }
        }
        return counts;
    }

    @Test
    void traceArrivalsAreRelativeToTheFirstTimestamp() {
        ArrivalProcess process = new TraceArrivals(new long[] {5_000, 5_000, 7_500, 10_000});
        assertEquals(0, process.nextArrivalNanos());
        assertEquals(0, process.nextArrivalNanos());
        assertEquals(2_500, process.nextArrivalNanos());
        assertEquals(5_000, process.nextArrivalNanos());
    }

    @Test
    void traceArrivalsRejectTimeGoingBackwards() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new TraceArrivals(new long[] {10, 5}));
        assertTrue(e.getMessage().contains("entry 1"), e.getMessage());
    }

    @Test
    void rampRejectsAStartAboveTheEndAndAZeroExponentialStartLikeVllm() {
        assertThrows(IllegalArgumentException.class, () -> RampUp.overRequests(RampStrategy.LINEAR, 10, 5));
        assertThrows(IllegalArgumentException.class, () -> RampUp.overRequests(RampStrategy.EXPONENTIAL, 0, 5));
        assertThrows(IllegalArgumentException.class,
                () -> new LoadPattern(3, 1, 0, RampUp.overRequests(RampStrategy.LINEAR, 1, 5), true));
    }

    @Test
    void closedLoopIsAnInfiniteRateWithAConcurrencyCap() {
        LoadPattern users = LoadPattern.closedLoop(8);
        assertTrue(users.isClosedLoop());
        assertEquals(8, users.maxConcurrency());
        assertEquals(0L, users.arrivals(10, 1).nextArrivalNanos());
    }

    @Test
    void gammaSamplerHasUnitMeanAndVarianceOneOverShape() {
        for (double shape : new double[] {0.3, 1.0, 3.0}) {
            SplitMix64 rng = new SplitMix64(17);
            SummaryStatistics s = new SummaryStatistics();
            for (int i = 0; i < 100_000; i++) {
                s.addValue(GammaSampler.unitMean(rng, shape));
            }
            assertEquals(1.0, s.getMean(), 0.02, "shape " + shape);
            assertEquals(1.0 / shape, s.getVariance(), 0.05 / shape, "shape " + shape);
        }
    }
}
