package dev.infersim.engine;

import org.apache.commons.math3.distribution.NormalDistribution;

import java.util.random.RandomGenerator;

/**
 * The normal distribution N(mu, sigma) truncated to [0, inf): draws by rejection (at least half of all draws are kept
 * when mu >= 0), moments in closed form with alpha = -mu / sigma and lambda = phi(alpha) / (1 - Phi(alpha)):
 * mean = mu + sigma lambda, variance = sigma^2 (1 + alpha lambda - lambda^2).
 * Source: Johnson, Kotz and Balakrishnan, Continuous Univariate Distributions, Vol. 1 (2nd ed., Wiley, 1994), ch. 13.
 */
public final class TruncatedNormal {
    private static final NormalDistribution STANDARD = new NormalDistribution(null, 0, 1);

    private TruncatedNormal() {
    }

    /** One draw; {@code mu} itself when {@code sigma} is 0. Needs {@code mu >= 0}. */
    public static double sample(RandomGenerator rng, double mu, double sigma) {
        if (sigma == 0) {
            return mu;
        }
        while (true) {
            double x = mu + sigma * rng.nextGaussian();
            if (x >= 0) {
                return x;
            }
        }
    }

    public static double mean(double mu, double sigma) {
        return sigma == 0 ? mu : mu + sigma * inverseMillsRatio(-mu / sigma);
    }

    public static double variance(double mu, double sigma) {
        if (sigma == 0) {
            return 0;
        }
        double alpha = -mu / sigma;
        double lambda = inverseMillsRatio(alpha);
        return sigma * sigma * (1 + alpha * lambda - lambda * lambda);
    }

    private static double inverseMillsRatio(double alpha) {
        return STANDARD.density(alpha) / (1 - STANDARD.cumulativeProbability(alpha));
    }
}
