package dev.infersim.sim;

import java.util.Locale;

/**
 * Whether the offered load exceeded what the deployment serves. Below capacity the backlog (requests arrived but not
 * finished) fluctuates around a level; above it the backlog grows linearly at (arrival rate - service rate). So the
 * verdict fits a least-squares line to the sampled backlog over the second half of the arrival window (the first half
 * is left to warm up) and calls the run saturated when the fitted growth over that half exceeds
 * {@value #GROWTH_FRACTION} of the requests that arrived in it (and at least {@value #MIN_GROWTH_REQUESTS} requests):
 * that flags offered loads above about 1.05 times capacity. GuideLLM's over-saturation detector uses the same idea
 * (slopes of concurrency over time).
 *
 * <p>A closed loop cannot saturate (every arrival waits for a completion); a burst (all requests at one instant with no
 * concurrency cap) is an infinite rate and always saturates.
 *
 * @param saturated          the verdict
 * @param backlogGrowth      fitted backlog growth over the second half of the arrival window, requests; NaN if not fitted
 * @param arrivalsInHalf     requests that arrived in that half
 * @param reason             one line explaining the verdict
 */
public record SaturationVerdict(boolean saturated, double backlogGrowth, long arrivalsInHalf, String reason) {

    static final double GROWTH_FRACTION = 0.05;
    static final int MIN_GROWTH_REQUESTS = 10;

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
        double slope = timeline.backlogSlopePerS(mid, lastArrivalNanos);
        long arrivals = arrivalsAt(timeline, lastArrivalNanos) - arrivalsAt(timeline, mid);
        if (Double.isNaN(slope)) {
            return new SaturationVerdict(false, Double.NaN, arrivals,
                    "too few timeline samples in the second half of the arrivals to fit a backlog trend");
        }
        double growth = slope * halfS;
        boolean saturated = growth > GROWTH_FRACTION * arrivals && growth >= MIN_GROWTH_REQUESTS;
        String reason = String.format(Locale.ROOT,
                "backlog grew by %.0f requests (%.1f%% of the %d arrivals) over the second half of the arrivals%s",
                growth, arrivals == 0 ? 0.0 : 100 * growth / arrivals, arrivals,
                saturated ? ": arrivals outpace service" : "");
        return new SaturationVerdict(saturated, growth, arrivals, reason);
    }

    private static long arrivalsAt(Timeline t, long nanos) {
        long arrivals = 0;
        for (int i = 0; i < t.size() && t.timeNanos(i) <= nanos; i++) {
            arrivals = t.arrivals(i);
        }
        return arrivals;
    }
}
