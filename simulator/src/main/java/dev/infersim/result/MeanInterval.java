package dev.infersim.result;

import org.apache.commons.math3.distribution.TDistribution;

/**
 * The mean of independent estimates of one quantity (replications of a run with different seeds, or the batch means
 * of consecutive windows of one run) with its 95% Student's t confidence interval: mean +- t(0.975, n - 1) s / sqrt(n)
 * (Law, <i>Simulation Modeling and Analysis</i>, 5th ed., 2015, sections 4.5 and 9.5.3). {@code low} and {@code high}
 * are NaN with fewer than two estimates.
 */
public record MeanInterval(double mean, double low, double high, int estimates) {

    /** The interval of the finite values among {@code values} (NaN ones are runs that had none). */
    public static MeanInterval of(double... values) {
        int n = 0;
        double sum = 0;
        for (double v : values) {
            if (Double.isFinite(v)) {
                n++;
                sum += v;
            }
        }
        if (n == 0) {
            return new MeanInterval(Double.NaN, Double.NaN, Double.NaN, 0);
        }
        double mean = sum / n;
        if (n < 2) {
            return new MeanInterval(mean, Double.NaN, Double.NaN, 1);
        }
        double squares = 0;
        for (double v : values) {
            if (Double.isFinite(v)) {
                squares += (v - mean) * (v - mean);
            }
        }
        double half = new TDistribution(null, n - 1).inverseCumulativeProbability(0.975) * Math.sqrt(squares / (n - 1) / n);
        return new MeanInterval(mean, mean - half, mean + half, n);
    }

    /** Half the interval's width over the mean: 0.05 is +-5%; NaN without an interval. */
    public double relativeHalfWidth() {
        return (high - low) / 2 / Math.abs(mean);
    }
}
