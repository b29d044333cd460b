package dev.infersim.workload.arrival;

import java.util.random.RandomGenerator;

/**
 * Gamma variates by Marsaglia and Tsang, "A simple method for generating gamma variables", ACM TOMS 26(3), 2000:
 * squeeze-and-reject on a cubed normal for shape >= 1, and for shape below 1 the boost
 * Gamma(a) = Gamma(a + 1) * U^(1/a) from the same paper. Shape 1 short-cuts to an exponential draw.
 * Written against {@link RandomGenerator} because Commons Math's samplers need its own generator type.
 */
final class GammaSampler {

    private GammaSampler() {
    }

    /** A Gamma(shape, scale = 1/shape) variate: mean 1, coefficient of variation 1/sqrt(shape). */
    static double unitMean(RandomGenerator rng, double shape) {
        return unitScale(rng, shape) / shape;
    }

    /** A Gamma(shape, scale = 1) variate. */
    static double unitScale(RandomGenerator rng, double shape) {
        if (shape == 1.0) {
            return rng.nextExponential();
        }
        if (shape < 1.0) {
            double u = rng.nextDouble();
            return unitScale(rng, shape + 1.0) * Math.pow(u, 1.0 / shape);
        }
        double d = shape - 1.0 / 3.0;
        double c = 1.0 / Math.sqrt(9.0 * d);
        while (true) {
            double x = rng.nextGaussian();
            double v = 1.0 + c * x;
            if (v <= 0) {
                continue;
            }
            v = v * v * v;
            double u = rng.nextDouble();
            double x2 = x * x;
            if (u < 1.0 - 0.0331 * x2 * x2) {
                return d * v;
            }
            if (Math.log(u) < 0.5 * x2 + d * (1.0 - v + Math.log(v))) {
                return d * v;
            }
        }
    }
}
