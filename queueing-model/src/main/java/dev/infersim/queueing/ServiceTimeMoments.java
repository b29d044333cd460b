package dev.infersim.queueing;

/**
 * The first three raw moments of a service time S, as the M/G/1 formulas need them.
 * Factories give the moments of the common shapes.
 *
 * @param meanSeconds E[S]
 * @param secondMomentSeconds2 E[S^2], at least E[S]^2
 * @param thirdMomentSeconds3 E[S^3], at least E[S^2]^{3/2} (Lyapunov's inequality)
 */
public record ServiceTimeMoments(double meanSeconds, double secondMomentSeconds2, double thirdMomentSeconds3) {

    private static final double ROUNDING = 1e-9;

    public ServiceTimeMoments {
        Checks.positive("meanSeconds", meanSeconds);
        Checks.positive("secondMomentSeconds2", secondMomentSeconds2);
        Checks.positive("thirdMomentSeconds3", thirdMomentSeconds3);
        if (secondMomentSeconds2 < meanSeconds * meanSeconds * (1 - ROUNDING)) {
            throw new IllegalArgumentException("secondMomentSeconds2 " + secondMomentSeconds2
                    + " is below meanSeconds^2 = " + meanSeconds * meanSeconds);
        }
        if (thirdMomentSeconds3 < Math.pow(secondMomentSeconds2, 1.5) * (1 - ROUNDING)) {
            throw new IllegalArgumentException("thirdMomentSeconds3 " + thirdMomentSeconds3
                    + " is below secondMomentSeconds2^1.5 = " + Math.pow(secondMomentSeconds2, 1.5));
        }
    }

    /** Exponential service: E[S^k] = k! m^k. */
    public static ServiceTimeMoments exponential(double meanSeconds) {
        return gamma(meanSeconds, 1);
    }

    /** Constant service: E[S^k] = m^k (the D in M/D/1). */
    public static ServiceTimeMoments deterministic(double meanSeconds) {
        return new ServiceTimeMoments(meanSeconds, meanSeconds * meanSeconds, meanSeconds * meanSeconds * meanSeconds);
    }

    /**
     * Gamma service with the given squared coefficient of variation scv = Var[S] / E[S]^2
     * (shape 1 / scv): E[S^2] = m^2 (1 + scv), E[S^3] = m^3 (1 + scv)(1 + 2 scv).
     */
    public static ServiceTimeMoments gamma(double meanSeconds, double squaredCoefficientOfVariation) {
        Checks.positive("squaredCoefficientOfVariation", squaredCoefficientOfVariation);
        double m = meanSeconds;
        double scv = squaredCoefficientOfVariation;
        return new ServiceTimeMoments(m, m * m * (1 + scv), m * m * m * (1 + scv) * (1 + 2 * scv));
    }

    /** Var[S] / E[S]^2. */
    public double squaredCoefficientOfVariation() {
        return secondMomentSeconds2 / (meanSeconds * meanSeconds) - 1;
    }
}
