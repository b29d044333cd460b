package dev.infersim.workload.length;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.infersim.common.SplitMix64;
import org.apache.commons.math3.stat.descriptive.DescriptiveStatistics;
import org.apache.commons.math3.stat.descriptive.SummaryStatistics;
import org.junit.jupiter.api.Test;

class LengthDistributionTest {

    private static final int SAMPLES = 100_000;

    private static SummaryStatistics sample(LengthDistribution d, long seed) {
        SplitMix64 rng = new SplitMix64(seed);
        SummaryStatistics s = new SummaryStatistics();
        for (int i = 0; i < SAMPLES; i++) {
            int v = d.sample(rng);
            assertTrue(v >= d.min() && v <= d.max(), v + " outside [" + d.min() + ", " + d.max() + "]");
            s.addValue(v);
        }
        return s;
    }

    @Test
    void rangeRatioUsesVllmsFloorAndCeilBoundsAndReachesBothEnds() {
        UniformLength input = UniformLength.ofRangeRatio(1000, 0.25, 0);
        assertEquals(750, input.low());
        assertEquals(1250, input.high());
        UniformLength odd = UniformLength.ofRangeRatio(7, 0.5, 0);
        assertEquals(3, odd.low(), "floor(3.5)");
        assertEquals(11, odd.high(), "ceil(10.5)");
        UniformLength output = UniformLength.ofRangeRatio(2, 0.9, 1);
        assertEquals(1, output.low(), "output lengths never go below 1, as in vLLM");
        SummaryStatistics s = sample(input, 3);
        assertEquals(750, s.getMin());
        assertEquals(1250, s.getMax());
        assertEquals(1000, s.getMean(), 2.0);
        assertThrows(IllegalArgumentException.class, () -> UniformLength.ofRangeRatio(100, 1.0, 0));
    }

    @Test
    void logNormalByMedianHasThatMedianAndItsExactClippedMean() {
        LogNormalLength chat = LogNormalLength.ofMedian(500, 0.8, 50, 4000);
        DescriptiveStatistics d = new DescriptiveStatistics();
        SplitMix64 rng = new SplitMix64(5);
        for (int i = 0; i < SAMPLES; i++) {
            d.addValue(chat.sample(rng));
        }
        // floor() moves the median down by about half a token.
        assertEquals(500, d.getPercentile(50), 500 * 0.02);
        // Unclipped mean would be 500 e^{0.32} = 688.6; the exact clipped-integer mean is slightly below.
        assertTrue(chat.mean() < 688.6 && chat.mean() > 670, "mean " + chat.mean());
        assertEquals(chat.mean(), d.getMean(), chat.mean() * 0.01);
        assertTrue(d.getMin() >= 50 && d.getMax() <= 4000);
    }

    @Test
    void logNormalByMeanAndStdMatchesBothMoments() {
        LogNormalLength d = LogNormalLength.ofMeanAndStd(500, 300, 0, Integer.MAX_VALUE - 1);
        SummaryStatistics s = sample(d, 8);
        assertEquals(499.5, s.getMean(), 5.0, "floor() lowers the mean by about half a token");
        assertEquals(300, s.getStandardDeviation(), 300 * 0.03);
    }

    @Test
    void logNormalByMeanAndSigmaHasThatMean() {
        LogNormalLength d = LogNormalLength.ofMean(800, 1.0, 0, Integer.MAX_VALUE - 1);
        assertEquals(800 / Math.exp(0.5), Math.exp(d.mu()), 1e-9, "median = mean e^{-sigma^2/2}");
        assertEquals(799.5, d.mean(), 0.05, "floor() lowers the mean by about half a token");
        assertEquals(d.mean(), sample(d, 12).getMean(), d.mean() * 0.02);
    }

    @Test
    void logNormalExactMeanAgreesWithSamplingWhenClippingBitesHard() {
        LogNormalLength summary = LogNormalLength.ofMedian(150, 0.8, 50, 500);
        assertEquals(summary.mean(), sample(summary, 4).getMean(), summary.mean() * 0.01);
    }

    @Test
    void zipfPutsMassOneOverHarmonicNumberOnTheShortestLength() {
        ZipfLength d = new ZipfLength(10, 1009, 1.0);
        double harmonic = 0;
        for (int r = 1; r <= 1000; r++) {
            harmonic += 1.0 / r;
        }
        SplitMix64 rng = new SplitMix64(2);
        int shortest = 0;
        SummaryStatistics s = new SummaryStatistics();
        for (int i = 0; i < SAMPLES; i++) {
            int v = d.sample(rng);
            shortest += v == 10 ? 1 : 0;
            s.addValue(v);
        }
        assertEquals(1 / harmonic, (double) shortest / SAMPLES, 0.005);
        assertEquals(d.mean(), s.getMean(), d.mean() * 0.02);
    }

    @Test
    void geometricHasTheRequestedMeanAndStopProbability() {
        GeometricLength d = new GeometricLength(200);
        SplitMix64 rng = new SplitMix64(6);
        SummaryStatistics s = new SummaryStatistics();
        int ones = 0;
        for (int i = 0; i < SAMPLES; i++) {
            int v = d.sample(rng);
            ones += v == 1 ? 1 : 0;
            s.addValue(v);
        }
        // sd of a geometric with mean 200 is ~199.5; standard error 0.63; 1% = 2 tokens = 3 standard errors.
        assertEquals(200, s.getMean(), 2.0);
        assertEquals(1.0 / 200, (double) ones / SAMPLES, 0.0015);
        assertEquals(1, new GeometricLength(1).sample(rng));
    }

    @Test
    void empiricalResamplesOnlyObservedValues() {
        EmpiricalLength d = new EmpiricalLength(new int[] {3, 3, 10});
        assertEquals(16 / 3.0, d.mean(), 1e-12);
        SummaryStatistics s = sample(d, 1);
        assertEquals(16 / 3.0, s.getMean(), 0.05);
        assertThrows(IllegalArgumentException.class, () -> new EmpiricalLength(new int[0]));
    }

    @Test
    void commandLineSpecsNameEveryLawOfTheFamily() {
        assertEquals(new FixedLength(40), LengthLaws.parse("fixed:40"));
        assertEquals(new UniformLength(10, 19), LengthLaws.parse("uniform:10:19"));
        assertEquals(new GeometricLength(100), LengthLaws.parse("geometric:100"));
        assertEquals(new GeometricLength(100), LengthLaws.parse("Exponential:100"));
        LengthDistribution lognormal = LengthLaws.parse("lognormal:256:0.7");
        assertEquals(256, new DescriptiveStatistics(sampleValues(lognormal)).getPercentile(50), 3, "median exp(mu)");
        assertEquals(1, lognormal.min());
        assertEquals(null, LengthLaws.parse("none"));
    }

    @Test
    void badCommandLineSpecsSayWhatIsWrong() {
        assertEquals("expected uniform:MIN:MAX", assertThrows(IllegalArgumentException.class,
                () -> LengthLaws.parse("uniform:9")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LengthLaws.parse("uniform:9:3")).getMessage()
                .contains("low <= high"));
        assertEquals("lengths start at 1 token, got 0", assertThrows(IllegalArgumentException.class,
                () -> LengthLaws.parse("fixed:0")).getMessage());
        assertEquals("not a number in fixed:N", assertThrows(IllegalArgumentException.class,
                () -> LengthLaws.parse("fixed:x")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LengthLaws.parse("gamma:3")).getMessage()
                .startsWith("expected none, fixed:N"));
    }

    private static double[] sampleValues(LengthDistribution d) {
        SplitMix64 rng = new SplitMix64(5);
        double[] values = new double[20_000];
        for (int i = 0; i < values.length; i++) {
            values[i] = d.sample(rng);
        }
        return values;
    }
}
