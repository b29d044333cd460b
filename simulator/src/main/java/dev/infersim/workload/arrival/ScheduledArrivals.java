package dev.infersim.workload.arrival;

import java.util.random.RandomGenerator;

/**
 * Arrivals whose rate follows a {@link RateSchedule}: a renewal process with unit-mean Gamma(burstiness) gaps in
 * operational time Lambda(t) = integral of r, mapped back through the inverse of Lambda (the time-change construction
 * {@link TimedRampArrivals} uses). Lambda is inverted by bisection to a nanosecond; with burstiness 1 the arrivals are
 * a non-homogeneous Poisson process of intensity r(t).
 */
final class ScheduledArrivals implements ArrivalProcess {
    private final double baseRps;
    private final RateSchedule schedule;
    private final double burstiness;
    private final RandomGenerator rng;
    private double operationalTime;
    private double lastS;

    ScheduledArrivals(double baseRps, RateSchedule schedule, double burstiness, RandomGenerator rng) {
        if (!(baseRps > 0) || Double.isInfinite(baseRps)) {
            throw new IllegalArgumentException("a rate schedule needs a finite base request rate > 0, got " + baseRps);
        }
        this.baseRps = baseRps;
        this.schedule = schedule;
        this.burstiness = burstiness;
        this.rng = rng;
    }

    @Override
    public long nextArrivalNanos() {
        operationalTime += Double.isInfinite(burstiness) ? 1.0 : GammaSampler.unitMean(rng, burstiness);
        double lo = lastS;
        double step = 1 / baseRps;
        double hi = lo + step;
        while (schedule.expectedArrivals(baseRps, hi) < operationalTime) {
            lo = hi;
            step *= 2;
            hi += step;
        }
        for (int i = 0; i < 100 && hi - lo > 1e-10; i++) { // to a tenth of a nanosecond, or the precision of a double
            double mid = (lo + hi) / 2;
            if (schedule.expectedArrivals(baseRps, mid) < operationalTime) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lastS = hi;
        return Math.round(hi * 1e9);
    }
}
