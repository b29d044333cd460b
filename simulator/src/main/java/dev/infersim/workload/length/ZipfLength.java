package dev.infersim.workload.length;

import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * Zipf-distributed lengths: P(K = min + r - 1) proportional to 1 / r^s for ranks r = 1..(max - min + 1), so the
 * shortest length is the most frequent and the tail decays as a power law (Zipf's law, e.g. Gray et al.,
 * "Quickly generating billion-record synthetic databases", SIGMOD 1994). Sampled by inverting a precomputed CDF
 * (binary search, no allocation); the table holds max - min + 1 doubles.
 */
public final class ZipfLength implements LengthDistribution {

    private final int min;
    private final int max;
    private final double exponent;
    private final double[] cumulative;
    private final double mean;

    /**
     * @param min      the most frequent (rank-1) length, >= 0 tokens
     * @param max      the longest length, >= min; max - min + 1 is limited to 10,000,000
     * @param exponent s, > 0
     */
    public ZipfLength(int min, int max, double exponent) {
        if (min < 0 || max < min) {
            throw new IllegalArgumentException("zipf length needs 0 <= min <= max, got [" + min + ", " + max + "]");
        }
        if ((long) max - min >= 10_000_000) {
            throw new IllegalArgumentException("zipf length support must be below 10,000,000 values, got ["
                    + min + ", " + max + "]");
        }
        if (!(exponent > 0) || Double.isInfinite(exponent)) {
            throw new IllegalArgumentException("zipf exponent must be finite and > 0, got " + exponent);
        }
        this.min = min;
        this.max = max;
        this.exponent = exponent;
        int n = max - min + 1;
        cumulative = new double[n];
        double total = 0;
        double weighted = 0;
        for (int r = 1; r <= n; r++) {
            double w = Math.pow(r, -exponent);
            total += w;
            weighted += w * (min + r - 1);
            cumulative[r - 1] = total;
        }
        for (int i = 0; i < n; i++) {
            cumulative[i] /= total;
        }
        cumulative[n - 1] = 1.0;
        this.mean = weighted / total;
    }

    @Override
    public int sample(RandomGenerator rng) {
        int i = Arrays.binarySearch(cumulative, rng.nextDouble());
        return min + (i >= 0 ? i : -i - 1);
    }

    @Override
    public double mean() {
        return mean;
    }

    @Override
    public int min() {
        return min;
    }

    @Override
    public int max() {
        return max;
    }

    public double exponent() {
        return exponent;
    }

    @Override
    public String toString() {
        return "ZipfLength[min=" + min + ", max=" + max + ", exponent=" + exponent + "]";
    }
}
