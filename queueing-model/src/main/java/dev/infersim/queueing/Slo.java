package dev.infersim.queueing;

/**
 * A latency service-level objective for one replica. An unset bound is positive infinity.
 * Build it from {@link #none()} with the {@code with} methods, for example
 * {@code Slo.none().withQueueingDelay(0.99, 0.5).withMeanTpot(0.05)}.
 *
 * @param queueingDelayPercentile p for the queueing-delay bound, in (0, 1)
 * @param maxQueueingDelaySeconds bound on the p-quantile of the admission wait
 * @param maxMeanTpotSeconds bound on the mean time per output token
 * @param maxMeanTtftSeconds bound on the mean time to first token
 */
public record Slo(double queueingDelayPercentile, double maxQueueingDelaySeconds, double maxMeanTpotSeconds,
        double maxMeanTtftSeconds) {

    public Slo {
        Checks.openUnitInterval("queueingDelayPercentile", queueingDelayPercentile);
        checkBound("maxQueueingDelaySeconds", maxQueueingDelaySeconds);
        checkBound("maxMeanTpotSeconds", maxMeanTpotSeconds);
        checkBound("maxMeanTtftSeconds", maxMeanTtftSeconds);
    }

    /** No bounds (the p99 is preset for a later {@link #withQueueingDelay}). */
    public static Slo none() {
        double unbounded = Double.POSITIVE_INFINITY;
        return new Slo(0.99, unbounded, unbounded, unbounded);
    }

    public Slo withQueueingDelay(double percentile, double maxSeconds) {
        return new Slo(percentile, maxSeconds, maxMeanTpotSeconds, maxMeanTtftSeconds);
    }

    public Slo withMeanTpot(double maxSeconds) {
        return new Slo(queueingDelayPercentile, maxQueueingDelaySeconds, maxSeconds, maxMeanTtftSeconds);
    }

    public Slo withMeanTtft(double maxSeconds) {
        return new Slo(queueingDelayPercentile, maxQueueingDelaySeconds, maxMeanTpotSeconds, maxSeconds);
    }

    private static void checkBound(String name, double bound) {
        if (!(bound > 0)) {
            throw new IllegalArgumentException(name + " must be positive (or infinite for no bound), got " + bound);
        }
    }
}
