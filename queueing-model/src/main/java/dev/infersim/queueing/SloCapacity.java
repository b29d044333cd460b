package dev.infersim.queueing;

/**
 * The highest Poisson request rate one replica sustains within an {@link Slo}, and the metric
 * that sets it. A rate of 0 means no rate meets the objective (it is violated even as the load
 * vanishes); {@link SloMetric#SATURATION} means no latency bound binds before saturation, and
 * the rate is the saturation rate itself, a supremum that is not attainable in steady state.
 *
 * @param maxRatePerS highest admissible arrival rate, requests per second
 * @param bindingMetric the constraint that limits it
 */
public record SloCapacity(double maxRatePerS, SloMetric bindingMetric) {

    public SloCapacity {
        Checks.nonNegative("maxRatePerS", maxRatePerS);
        if (bindingMetric == null) {
            throw new IllegalArgumentException("bindingMetric must be given");
        }
    }

    /** Whether any positive rate meets the objective. */
    public boolean feasible() {
        return maxRatePerS > 0;
    }
}
