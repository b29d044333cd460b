package dev.infersim.bench.measure;

/**
 * A request's place in the run's schedule, handed with it from the pacer (or a closed loop's user) to the lane that
 * sends it: when it was meant to go out, how long after the request before it, and what its latencies count from (the
 * scheduled instant, or when a {@code --max-concurrency} slot freed after it: coordinated omission is counted, not
 * hidden). Nanoseconds on the run's clock.
 *
 * @param gapNanos scheduled time since the previous request's, to tell a burst's send lag from the rest;
 *                 {@link #NO_GAP} for the first request and for unscheduled ones
 */
public record SendSchedule(long scheduledNanos, long gapNanos, long originNanos) {
    public static final long NO_GAP = Long.MAX_VALUE;

    /** A closed loop's request: it goes out the moment its user's previous one ended, and counts from then. */
    public static SendSchedule unscheduled(long originNanos) {
        return new SendSchedule(originNanos, NO_GAP, originNanos);
    }
}
