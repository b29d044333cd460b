package dev.infersim.workload.length;

import java.util.random.RandomGenerator;

/**
 * Resamples observed lengths uniformly with replacement (the empirical distribution of a dataset, e.g. the output
 * lengths of ShareGPT replies).
 */
public final class EmpiricalLength implements LengthDistribution {

    private final int[] values;
    private final double mean;
    private final int min;
    private final int max;

    /** @param observed observed lengths, at least one, each >= 0; copied */
    public EmpiricalLength(int[] observed) {
        if (observed.length == 0) {
            throw new IllegalArgumentException("an empirical length distribution needs at least one observation");
        }
        values = observed.clone();
        long sum = 0;
        int lo = Integer.MAX_VALUE;
        int hi = Integer.MIN_VALUE;
        for (int v : values) {
            if (v < 0) {
                throw new IllegalArgumentException("observed lengths must be >= 0 tokens, got " + v);
            }
            sum += v;
            lo = Math.min(lo, v);
            hi = Math.max(hi, v);
        }
        mean = (double) sum / values.length;
        min = lo;
        max = hi;
    }

    @Override
    public int sample(RandomGenerator rng) {
        return values[rng.nextInt(values.length)];
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

    @Override
    public String toString() {
        return "EmpiricalLength[n=" + values.length + ", mean=" + mean + ", min=" + min + ", max=" + max + "]";
    }
}
