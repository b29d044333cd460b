package dev.infersim.workload.length;

import java.util.random.RandomGenerator;
import org.apache.commons.math3.special.Erf;

/**
 * Log-normal lengths truncated to integers and clipped: K = clip(floor(exp(mu + sigma Z)), min, max) with Z standard
 * normal. This is the length model of "Serving Benchmark Methodology: How to Properly Measure LLM Inference
 * Performance" (Inference Optimization Timeline, part 40), whose generator draws
 * {@code np.clip(np.random.lognormal(mean=log(m), sigma=0.8).astype(int), min, max)}: median exp(mu) = m.
 * {@link #mean()} is the mean of the clipped integer law, min + sum_{k=min}^{max-1} P(X >= k + 1), summed exactly
 * over the first 200,000 terms and in closed form (trapezoid on E[min(X, c)]) beyond.
 */
public final class LogNormalLength implements LengthDistribution {

    private final double mu;
    private final double sigma;
    private final int min;
    private final int max;
    private final double mean;

    /** Terms of the mean's series summed exactly; the rest is integrated in closed form. */
    private static final long EXACT_TERMS = 200_000;

    /**
     * @param mu    mean of ln X (the median of X is exp(mu))
     * @param sigma standard deviation of ln X, > 0
     * @param min   lower clip, >= 0 tokens
     * @param max   upper clip, >= min
     */
    public LogNormalLength(double mu, double sigma, int min, int max) {
        if (!Double.isFinite(mu)) {
            throw new IllegalArgumentException("log-normal mu must be finite, got " + mu);
        }
        if (!(sigma > 0) || Double.isInfinite(sigma)) {
            throw new IllegalArgumentException("log-normal sigma must be finite and > 0, got " + sigma);
        }
        if (min < 0 || max < min) {
            throw new IllegalArgumentException("log-normal clip needs 0 <= min <= max, got [" + min + ", " + max + "]");
        }
        this.mu = mu;
        this.sigma = sigma;
        this.min = min;
        this.max = max;
        this.mean = clippedMean();
    }

    /** The distribution whose unclipped median is {@code median} tokens. */
    public static LogNormalLength ofMedian(double median, double sigma, int min, int max) {
        if (!(median > 0)) {
            throw new IllegalArgumentException("log-normal median must be > 0 tokens, got " + median);
        }
        return new LogNormalLength(Math.log(median), sigma, min, max);
    }

    /** The distribution whose unclipped mean is {@code mean} tokens: mu = ln(mean) - sigma^2/2. */
    public static LogNormalLength ofMean(double mean, double sigma, int min, int max) {
        if (!(mean > 0)) {
            throw new IllegalArgumentException("log-normal mean must be > 0 tokens, got " + mean);
        }
        return new LogNormalLength(Math.log(mean) - sigma * sigma / 2, sigma, min, max);
    }

    /**
     * The distribution whose unclipped mean and standard deviation are {@code mean} and {@code std} (moment match:
     * sigma^2 = ln(1 + std^2/mean^2), mu = ln(mean) - sigma^2/2).
     */
    public static LogNormalLength ofMeanAndStd(double mean, double std, int min, int max) {
        if (!(mean > 0) || !(std > 0)) {
            throw new IllegalArgumentException("log-normal mean and std must be > 0 tokens, got mean " + mean
                    + ", std " + std);
        }
        double variance = Math.log1p(std * std / (mean * mean));
        return new LogNormalLength(Math.log(mean) - variance / 2, Math.sqrt(variance), min, max);
    }

    private double clippedMean() {
        long exactTerms = Math.min((long) max - min, EXACT_TERMS);
        double sum = min;
        for (long k = min; k < min + exactTerms; k++) {
            sum += survival(k + 1.0);
        }
        long from = min + exactTerms;
        if (from < max) {
            // sum_{j=from+1}^{max} S(j) by the trapezoid rule on the closed-form integral of S; S is smooth and slowly
            // varying this far out, so the error is far below a token.
            double a = from + 1.0;
            sum += partialExpectation(max) - partialExpectation(a) + (survival(a) + survival(max)) / 2;
        }
        return sum;
    }

    /** P(X >= x) for the continuous log-normal X. */
    private double survival(double x) {
        return upperNormalTail((Math.log(x) - mu) / sigma);
    }

    /** 1 - Phi(z), without cancellation in the upper tail. */
    private static double upperNormalTail(double z) {
        return 0.5 * Erf.erfc(z / Math.sqrt(2));
    }

    /** E[min(X, c)] = e^{mu + sigma^2/2} Phi((ln c - mu - sigma^2)/sigma) + c (1 - Phi((ln c - mu)/sigma)). */
    private double partialExpectation(double c) {
        double z = (Math.log(c) - mu) / sigma;
        return Math.exp(mu + sigma * sigma / 2) * (1 - upperNormalTail(z - sigma)) + c * upperNormalTail(z);
    }

    @Override
    public int sample(RandomGenerator rng) {
        double x = Math.exp(mu + sigma * rng.nextGaussian());
        if (x >= max) {
            return max;
        }
        return Math.max(min, (int) x);
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

    /** mu, the mean of ln X. */
    public double mu() {
        return mu;
    }

    /** sigma, the standard deviation of ln X. */
    public double sigma() {
        return sigma;
    }

    @Override
    public String toString() {
        return "LogNormalLength[median=" + Math.exp(mu) + ", sigma=" + sigma + ", min=" + min + ", max=" + max + "]";
    }
}
