package dev.infersim.workload;

import java.util.random.RandomGenerator;
import org.apache.commons.math3.distribution.NormalDistribution;

/**
 * Log-normal lengths truncated to integers and clipped: K = clip(floor(exp(mu + sigma Z)), min, max) with Z standard
 * normal. This is the length model of the serving-benchmark methodology note in the project's seed material
 * (seed 001: {@code np.clip(np.random.lognormal(mean=log(m), sigma=0.8).astype(int), min, max)}), whose median is
 * exp(mu). {@link #mean()} is exact for the clipped integer law: min + sum_{k=min}^{max-1} P(X >= k + 1).
 */
public final class LogNormalLength implements LengthDistribution {

    private final double mu;
    private final double sigma;
    private final int min;
    private final int max;
    private final double mean;

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
        NormalDistribution logScale = new NormalDistribution(null, mu, sigma);
        double sum = min;
        for (int k = min; k < max; k++) {
            sum += 1.0 - logScale.cumulativeProbability(Math.log(k + 1.0));
        }
        return sum;
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
