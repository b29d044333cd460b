package dev.infersim.queueing;

import java.util.Arrays;

/**
 * A distribution on finitely many values: the measured lengths or service times of a workload, or a mixture a model
 * builds from them. Values are sorted and carry probabilities summing to 1; samples with many distinct values are
 * condensed into equal-probability bins (each holding the bin's mean), so the first moment is kept exactly and the
 * formulas that sum over the values stay cheap.
 */
public final class DiscreteDistribution {

    /** Most distinct values kept from samples; beyond it, equal-probability bins. */
    static final int MAX_ATOMS = 1024;

    private final double[] values;
    private final double[] probabilities;

    private DiscreteDistribution(double[] values, double[] probabilities) {
        this.values = values;
        this.probabilities = probabilities;
    }

    /** One value with probability 1. */
    public static DiscreteDistribution constant(double value) {
        Checks.nonNegative("value", value);
        return new DiscreteDistribution(new double[] {value}, new double[] {1});
    }

    /** The empirical distribution of non-negative samples. */
    public static DiscreteDistribution ofSamples(double[] samples) {
        if (samples.length == 0) {
            throw new IllegalArgumentException("samples must not be empty");
        }
        double[] sorted = samples.clone();
        Arrays.sort(sorted);
        Checks.nonNegative("smallest sample", sorted[0]);
        Checks.nonNegative("largest sample", sorted[sorted.length - 1]);
        int distinct = 1;
        for (int i = 1; i < sorted.length; i++) {
            distinct += sorted[i] != sorted[i - 1] ? 1 : 0;
        }
        return distinct <= MAX_ATOMS ? merged(sorted, distinct) : binned(sorted);
    }

    /** A mixture: value i with weight i, weights non-negative with a positive sum (normalised here). */
    public static DiscreteDistribution ofWeighted(double[] values, double[] weights) {
        if (values.length != weights.length || values.length == 0) {
            throw new IllegalArgumentException("values and weights must be non-empty and of equal length, got "
                    + values.length + " and " + weights.length);
        }
        Integer[] order = new Integer[values.length];
        double total = 0;
        for (int i = 0; i < values.length; i++) {
            order[i] = i;
            Checks.nonNegative("weight", weights[i]);
            total += weights[i];
        }
        Checks.positive("total weight", total);
        Arrays.sort(order, (a, b) -> Double.compare(values[a], values[b]));
        double[] v = new double[values.length];
        double[] p = new double[values.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = values[order[i]];
            p[i] = weights[order[i]] / total;
        }
        return new DiscreteDistribution(v, p);
    }

    private static DiscreteDistribution merged(double[] sorted, int distinct) {
        double[] v = new double[distinct];
        double[] p = new double[distinct];
        int k = -1;
        for (int i = 0; i < sorted.length; i++) {
            if (i == 0 || sorted[i] != sorted[i - 1]) {
                v[++k] = sorted[i];
            }
            p[k] += 1.0 / sorted.length;
        }
        return new DiscreteDistribution(v, p);
    }

    private static DiscreteDistribution binned(double[] sorted) {
        double[] v = new double[MAX_ATOMS];
        double[] p = new double[MAX_ATOMS];
        for (int b = 0; b < MAX_ATOMS; b++) {
            int from = (int) ((long) b * sorted.length / MAX_ATOMS);
            int to = (int) ((long) (b + 1) * sorted.length / MAX_ATOMS);
            double sum = 0;
            for (int i = from; i < to; i++) {
                sum += sorted[i];
            }
            v[b] = sum / (to - from);
            p[b] = (double) (to - from) / sorted.length;
        }
        return new DiscreteDistribution(v, p);
    }

    /** This distribution in at most {@code atoms} equal-probability bins, each at its mean (the mean is kept). */
    public DiscreteDistribution condensed(int atoms) {
        Checks.positive("atoms", atoms);
        if (values.length <= atoms) {
            return this;
        }
        double[] v = new double[atoms];
        double[] p = new double[atoms];
        double cumulative = 0;
        for (int i = 0; i < values.length; i++) {
            int bin = (int) Math.min(atoms - 1, (cumulative + probabilities[i] / 2) * atoms);
            v[bin] += values[i] * probabilities[i];
            p[bin] += probabilities[i];
            cumulative += probabilities[i];
        }
        int kept = 0;
        for (int b = 0; b < atoms; b++) {
            if (p[b] > 0) {
                v[kept] = v[b] / p[b];
                p[kept++] = p[b];
            }
        }
        return new DiscreteDistribution(Arrays.copyOf(v, kept), Arrays.copyOf(p, kept));
    }

    public int size() {
        return values.length;
    }

    public double value(int i) {
        return values[i];
    }

    public double probability(int i) {
        return probabilities[i];
    }

    /** E[X^k]. */
    public double moment(int k) {
        double m = 0;
        for (int i = 0; i < values.length; i++) {
            m += probabilities[i] * Math.pow(values[i], k);
        }
        return m;
    }

    public double mean() {
        return moment(1);
    }

    /** Var[X] / E[X]^2, 0 for a constant. */
    public double squaredCoefficientOfVariation() {
        double mean = mean();
        return mean == 0 ? 0 : Math.max(0, moment(2) / (mean * mean) - 1);
    }

    /** ln E[e^{theta X}], summed in log space so large theta X cannot overflow. */
    public double logMomentGenerating(double theta) {
        double largest = theta * values[theta >= 0 ? values.length - 1 : 0];
        double sum = 0;
        for (int i = 0; i < values.length; i++) {
            sum += probabilities[i] * Math.exp(theta * values[i] - largest);
        }
        return largest + Math.log(sum);
    }

    /** The smallest value x with P(X <= x) >= p. */
    public double quantile(double p) {
        Checks.openUnitInterval("percentile", p);
        double cumulative = 0;
        for (int i = 0; i < values.length; i++) {
            cumulative += probabilities[i];
            if (cumulative >= p - 1e-12) {
                return values[i];
            }
        }
        return values[values.length - 1];
    }

    public double max() {
        return values[values.length - 1];
    }
}
