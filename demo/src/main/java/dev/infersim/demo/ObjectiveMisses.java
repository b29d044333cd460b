package dev.infersim.demo;

import org.apache.commons.math3.distribution.BetaDistribution;
import org.apache.commons.math3.distribution.TDistribution;

import java.util.Arrays;
import java.util.List;

/**
 * The requests of measured runs that missed a TTFT objective, counted in consecutive sections of each run (in the order
 * they were sent), and whether that shows a percentile meeting the objective. The question asked is the demo's own:
 * does the share of requests over the objective stay under {@code 1 - p}? Asked at the objective rather than through the
 * p99's interval it can be answered where that interval cannot: a run near the knee whose few slowest requests came
 * together (a busy moment of this machine) has a p99 interval open above (its sections disagree about the fraction
 * below the p99 estimate, {@link dev.infersim.result.PercentileSections}), while a run whose requests all met 150 ms
 * shows the objective met at once.
 *
 * <p>The share's one-sided 97.5% upper bound (the upper end of a two-sided 95% interval, as every interval of the demo)
 * is the larger of two: the Clopper-Pearson bound for independent requests (Clopper and Pearson, Biometrika 26(4),
 * 1934), which with no miss is {@code 1 - 0.025^(1/n)} and so needs about 370 requests to show a p99; and sectioning
 * (Asmussen and Glynn, <i>Stochastic Simulation</i>, 2007, III.5a): the spread of the sections' shares with Student's
 * t, so that misses that came together, as queueing delays do, widen it. Repeats of a rate pool their sections.
 */
final class ObjectiveMisses {
    /** Sections each run is cut into (in send order). */
    static final int SECTIONS = 10;
    /** One-sided level of the bound: the upper end of a two-sided 95% interval. */
    private static final double LEVEL = 0.975;

    /** Requests and misses of each section, of every run pooled. */
    private final long[] requests;
    private final long[] misses;

    private ObjectiveMisses(long[] requests, long[] misses) {
        this.requests = requests;
        this.misses = misses;
    }

    static final ObjectiveMisses NONE = new ObjectiveMisses(new long[0], new long[0]);

    /**
     * @param ttftMs     a run's measured TTFTs in the order they were sent, model ms (+Infinity for a request that
     *                   failed: it did not meet the objective)
     * @param objectiveMs the TTFT objective, model ms
     */
    static ObjectiveMisses of(double[] ttftMs, double objectiveMs) {
        int n = ttftMs.length;
        int m = Math.min(SECTIONS, n);
        long[] requests = new long[m];
        long[] misses = new long[m];
        for (int i = 0; i < n; i++) {
            int section = (int) ((long) i * m / n);
            requests[section]++;
            misses[section] += ttftMs[i] <= objectiveMs ? 0 : 1;
        }
        return new ObjectiveMisses(requests, misses);
    }

    /** Runs of the same rate together: their sections side by side. */
    static ObjectiveMisses pooled(List<ObjectiveMisses> runs) {
        long[] requests = runs.stream().flatMapToLong(r -> Arrays.stream(r.requests)).toArray();
        long[] misses = runs.stream().flatMapToLong(r -> Arrays.stream(r.misses)).toArray();
        return new ObjectiveMisses(requests, misses);
    }

    long requests() {
        return Arrays.stream(requests).sum();
    }

    long misses() {
        return Arrays.stream(misses).sum();
    }

    /**
     * The upper bound of the share of requests over the objective (the larger of Clopper-Pearson's and sectioning's);
     * 1 without requests.
     */
    double missShareHigh() {
        long n = requests();
        long k = misses();
        if (n == 0) {
            return 1;
        }
        double independent = k >= n ? 1 : new BetaDistribution(null, k + 1, n - k).inverseCumulativeProbability(LEVEL);
        return Math.max(independent, sectioned(n, k));
    }

    /**
     * The share's mean plus t times its standard error over the sections, weighted by their sizes (as
     * {@code PercentileSections} does); 0 with fewer than two sections.
     */
    private double sectioned(long n, long k) {
        int m = 0;
        for (long r : requests) {
            m += r > 0 ? 1 : 0;
        }
        if (m < 2) {
            return 0;
        }
        double mean = (double) k / n;
        double sum = 0;
        for (int j = 0; j < requests.length; j++) {
            if (requests[j] > 0) {
                double w = (double) requests[j] / n;
                double f = (double) misses[j] / requests[j];
                sum += w * w * (f - mean) * (f - mean);
            }
        }
        double variance = sum * m / (m - 1);
        return mean + new TDistribution(null, m - 1).inverseCumulativeProbability(LEVEL) * Math.sqrt(variance);
    }

    /**
     * Whether the runs show the {@code percentile}-th percentile (0..100) within the objective: the share over it is
     * below {@code 1 - percentile / 100} at 97.5%.
     */
    boolean showsMet(double percentile) {
        return missShareHigh() < 1 - percentile / 100;
    }
}
