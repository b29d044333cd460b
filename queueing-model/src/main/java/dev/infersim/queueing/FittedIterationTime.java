package dev.infersim.queueing;

/**
 * An iteration-time model fitted by least squares, with the goodness of fit the caller should
 * check before trusting predictions built on it.
 *
 * @param iterationTime the fitted coefficients
 * @param rSquared coefficient of determination of the fit, in [0, 1]
 * @param samples number of (step shape, step time) observations used
 */
public record FittedIterationTime(IterationTime iterationTime, double rSquared, int samples) {

    public FittedIterationTime {
        if (iterationTime == null) {
            throw new IllegalArgumentException("iterationTime must be given");
        }
        if (!(rSquared >= 0 && rSquared <= 1 + 1e-12)) {
            throw new IllegalArgumentException("rSquared must be in [0, 1], got " + rSquared);
        }
        Checks.positive("samples", samples);
    }
}
