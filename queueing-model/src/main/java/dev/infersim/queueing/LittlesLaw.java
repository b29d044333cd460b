package dev.infersim.queueing;

/**
 * Little's law L = lambda W, which holds for any stable system in steady state whatever the
 * arrival and service distributions. Source: J. D. C. Little, "A proof for the queuing formula
 * L = lambda W", Operations Research 9(3), 1961.
 */
public final class LittlesLaw {

    private LittlesLaw() {}

    /** L = lambda W: mean number in the system from the arrival rate and mean time in it. */
    public static double meanNumber(double arrivalRatePerS, double meanTimeSeconds) {
        return Checks.nonNegative("arrivalRatePerS", arrivalRatePerS)
               * Checks.nonNegative("meanTimeSeconds", meanTimeSeconds);
    }

    /** W = L / lambda: mean time in the system from the mean number in it and the arrival rate. */
    public static double meanTimeSeconds(double meanNumber, double arrivalRatePerS) {
        return Checks.nonNegative("meanNumber", meanNumber) / Checks.positive("arrivalRatePerS", arrivalRatePerS);
    }

    /** lambda = L / W: throughput from the mean number in the system and the mean time in it. */
    public static double arrivalRatePerS(double meanNumber, double meanTimeSeconds) {
        return Checks.nonNegative("meanNumber", meanNumber) / Checks.positive("meanTimeSeconds", meanTimeSeconds);
    }
}
