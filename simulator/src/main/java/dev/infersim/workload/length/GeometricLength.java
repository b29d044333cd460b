package dev.infersim.workload.length;

import java.util.random.RandomGenerator;

/**
 * Geometric lengths on {1, 2, ...} with the given mean: every generated token ends the sequence with probability
 * p = 1/mean, independently (a memoryless EOS). This is the output-length law under which the continuous-batching
 * birth-death chain is exact (see the queueing reference). Sampled by inversion: 1 + floor(ln U / ln(1 - p)).
 */
public record GeometricLength(double meanTokens) implements LengthDistribution {

    public GeometricLength {
        if (!(meanTokens >= 1) || Double.isInfinite(meanTokens)) {
            throw new IllegalArgumentException("geometric mean must be finite and >= 1 token, got " + meanTokens);
        }
    }

    @Override
    public int sample(RandomGenerator rng) {
        if (meanTokens == 1.0) {
            return 1;
        }
        // -E/ln(1-p) with E ~ Exp(1) is ln U / ln(1-p); nextExponential avoids the log of a zero uniform.
        double draw = rng.nextExponential() / -Math.log1p(-1.0 / meanTokens);
        return draw >= Integer.MAX_VALUE - 1 ? Integer.MAX_VALUE : 1 + (int) draw;
    }

    @Override
    public double mean() {
        return meanTokens;
    }

    @Override
    public int min() {
        return 1;
    }

    @Override
    public int max() {
        return Integer.MAX_VALUE;
    }
}
