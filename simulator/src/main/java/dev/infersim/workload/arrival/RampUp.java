package dev.infersim.workload.arrival;

/**
 * A request-rate ramp from {@code startRps} to {@code endRps}.
 *
 * <p>With {@code durationNanos == 0} the ramp spans the request count, exactly as vLLM's
 * {@code --ramp-up-strategy/--ramp-up-start-rps/--ramp-up-end-rps}: request i (of N) is sent at rate
 * r_i = rate(progress = i / (N - 1)), its gap drawn from the gamma of {@code --burstiness} at that rate
 * ({@link CountRampArrivals}). With {@code durationNanos > 0} (an infersim extension) the rate is a function of time
 * that reaches {@code endRps} after the duration and stays there ({@link TimedRampArrivals}).
 *
 * @param strategy      linear or exponential
 * @param startRps      rate at the start, requests per second; > 0 except for a linear ramp over a duration
 * @param endRps        rate at the end, requests per second; >= startRps as vLLM requires
 * @param durationNanos ramp length in nanoseconds, or 0 to ramp over the request count
 */
public record RampUp(RampStrategy strategy, double startRps, double endRps, long durationNanos) {

    public RampUp {
        if (strategy == null) {
            throw new IllegalArgumentException("ramp-up strategy must not be null");
        }
        if (!(startRps >= 0) || Double.isInfinite(startRps)) {
            throw new IllegalArgumentException("ramp-up start rate must be finite and >= 0 req/s, got " + startRps);
        }
        if (!(endRps > 0) || Double.isInfinite(endRps)) {
            throw new IllegalArgumentException("ramp-up end rate must be finite and > 0 req/s, got " + endRps);
        }
        if (startRps > endRps) {
            throw new IllegalArgumentException(
                    "ramp-up start rate " + startRps + " req/s must not exceed the end rate " + endRps + " req/s");
        }
        if (durationNanos < 0) {
            throw new IllegalArgumentException("ramp-up duration must be >= 0 ns, got " + durationNanos);
        }
        if (startRps == 0 && (strategy == RampStrategy.EXPONENTIAL || durationNanos == 0)) {
            throw new IllegalArgumentException("ramp-up start rate must be > 0 req/s for an exponential ramp or a ramp "
                    + "over the request count (the first request would never be sent)");
        }
    }

    /** vLLM's ramp over the request count. */
    public static RampUp overRequests(RampStrategy strategy, double startRps, double endRps) {
        return new RampUp(strategy, startRps, endRps, 0L);
    }

    /** A ramp over wall (or virtual) time that then holds the end rate. */
    public static RampUp overDuration(RampStrategy strategy, double startRps, double endRps, long durationNanos) {
        if (durationNanos <= 0) {
            throw new IllegalArgumentException("ramp-up duration must be > 0 ns, got " + durationNanos);
        }
        return new RampUp(strategy, startRps, endRps, durationNanos);
    }

    /** The request rate for request {@code index} of {@code total} in vLLM's count-based ramp. */
    public double rateForRequest(long index, long total) {
        double progress = (double) index / Math.max(total - 1, 1);
        return strategy.rateAt(startRps, endRps, progress);
    }
}
