package dev.infersim.sim;

import java.util.Locale;

/**
 * Whether the offered load exceeded what the deployment serves. Below capacity the queue (requests arrived but not yet
 * running: waiting in the engine or for a client concurrency slot) fluctuates around a level; above it the running
 * batch is as large as the engine allows and the queue grows linearly at (arrival rate - service rate). The running
 * batch itself is left out: under continuous batching it swings widely with load without being a queue. So the
 * verdict fits a least-squares line to the sampled queue over the second half of the arrival window (the first half
 * is left to warm up) and calls the run saturated when the fitted growth over that half exceeds
 * {@value #GROWTH_FRACTION} of the requests that arrived in it, at least {@value #MIN_GROWTH_REQUESTS} requests, and
 * {@value #NOISE_FACTOR} times the queue's jitter between samples (a stable queue's random swings in a short run are
 * not growth; a curved rise, as under a rate ramp, is). That flags offered loads above about 1.05 times capacity. GuideLLM's over-saturation detector uses the
 * same idea (slopes of concurrency over time, with margins).
 *
 * <p>A closed loop cannot saturate (every arrival waits for a completion); a burst (all requests at one instant with no
 * concurrency cap) is an infinite rate and always saturates.
 *
 * @param saturated          the verdict
 * @param queueGrowth        fitted queue growth over the second half of the arrival window, requests; NaN if not fitted
 * @param arrivalsInHalf     requests that arrived in that half
 * @param reason             one line explaining the verdict
 */
public record SaturationVerdict(boolean saturated, double queueGrowth, long arrivalsInHalf, String reason) {

    static final double GROWTH_FRACTION = 0.05;
    static final int MIN_GROWTH_REQUESTS = 10;
    static final double NOISE_FACTOR = 4;

    public static SaturationVerdict closedLoop(int users) {
        return new SaturationVerdict(false, Double.NaN, 0,
                "closed loop of " + users + " users: each arrival waits for a completion, so the queue stays bounded");
    }

    public static SaturationVerdict burst(long requests) {
        return new SaturationVerdict(true, Double.NaN, requests,
                "all " + requests + " requests arrive at once (request rate inf, no concurrency cap)");
    }

    /** Assesses an open-loop run whose scheduled arrivals span [firstArrivalNanos, lastArrivalNanos]. */
    public static SaturationVerdict assess(Timeline timeline, long firstArrivalNanos, long lastArrivalNanos) {
        long mid = firstArrivalNanos + (lastArrivalNanos - firstArrivalNanos) / 2;
        double halfS = (lastArrivalNanos - mid) / 1e9;
        Timeline.QueueTrend trend = timeline.fitQueued(mid, lastArrivalNanos);
        long arrivals = arrivalsAt(timeline, lastArrivalNanos) - arrivalsAt(timeline, mid);
        if (Double.isNaN(trend.slopePerS())) {
            return new SaturationVerdict(false, Double.NaN, arrivals,
                    "too few timeline samples in the second half of the arrivals to fit a queue trend");
        }
        double growth = trend.slopePerS() * halfS;
        boolean saturated = growth > GROWTH_FRACTION * arrivals && growth >= MIN_GROWTH_REQUESTS
                && growth > NOISE_FACTOR * trend.jitter();
        String reason = String.format(Locale.ROOT,
                "queue grew by %d requests (%.1f%% of the %d arrivals; jitter %.1f) over the second half of the "
                        + "arrivals%s",
                Math.round(growth), percentOf(growth, arrivals), arrivals, trend.jitter(),
                saturated ? ": arrivals outpace service" : "");
        return new SaturationVerdict(saturated, growth, arrivals, reason);
    }

    /** growth as a percentage of arrivals, with values that print as -0.0 made 0. */
    private static double percentOf(double growth, long arrivals) {
        double percent = arrivals == 0 ? 0 : 100 * growth / arrivals;
        return Math.abs(percent) < 0.05 ? 0 : percent;
    }

    private static long arrivalsAt(Timeline t, long nanos) {
        long arrivals = 0;
        for (int i = 0; i < t.size() && t.timeNanos(i) <= nanos; i++) {
            arrivals = t.arrivals(i);
        }
        return arrivals;
    }
}
