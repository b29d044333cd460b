package dev.infersim.workload.arrival;

import java.util.random.RandomGenerator;

/**
 * A ramp of the request rate over time: r(t) rises from start to end over the duration D, linearly or
 * exponentially, then holds the end rate. Arrivals are a renewal process with unit-mean Gamma(burstiness) gaps in
 * operational time Lambda(t) = integral of r, mapped back through the inverse of Lambda (the time-change
 * construction of a non-homogeneous process, e.g. Ross, "Simulation", 5th ed., section 5.5). Burstiness 1 gives an
 * exact non-homogeneous Poisson process with intensity r(t).
 *
 * <p>Lambda(t) for t <= D: linear r0 t + (r1 - r0) t^2 / (2D); exponential r0 D (q^(t/D) - 1) / ln q with
 * q = r1/r0. Beyond D: Lambda(D) + r1 (t - D).
 */
public final class TimedRampArrivals implements ArrivalProcess {

    private final RampStrategy strategy;
    private final double startPerNano;
    private final double endPerNano;
    private final double durationNanos;
    private final double rampIntegral;
    private final double burstiness;
    private final RandomGenerator rng;
    private double operationalTime;

    /**
     * @param ramp       a ramp with a positive duration
     * @param burstiness gamma shape of the operational-time gaps, > 0; infinity for evenly spaced operational time
     * @param rng        the stream the gaps are drawn from
     */
    public TimedRampArrivals(RampUp ramp, double burstiness, RandomGenerator rng) {
        if (ramp.durationNanos() <= 0) {
            throw new IllegalArgumentException("a timed ramp needs a duration > 0 ns, got " + ramp.durationNanos());
        }
        if (!(burstiness > 0)) {
            throw new IllegalArgumentException("burstiness must be > 0, got " + burstiness);
        }
        this.strategy = ramp.strategy();
        this.startPerNano = ramp.startRps() / 1e9;
        this.endPerNano = ramp.endRps() / 1e9;
        this.durationNanos = ramp.durationNanos();
        this.burstiness = burstiness;
        this.rng = rng;
        this.rampIntegral = integralUpTo(durationNanos);
    }

    @Override
    public long nextArrivalNanos() {
        operationalTime += Double.isInfinite(burstiness) ? 1.0 : GammaSampler.unitMean(rng, burstiness);
        return Math.round(timeOf(operationalTime));
    }

    /** Lambda(t): the expected number of arrivals in [0, t], for t within the ramp. */
    private double integralUpTo(double t) {
        if (strategy == RampStrategy.LINEAR) {
            return startPerNano * t + (endPerNano - startPerNano) * t * t / (2 * durationNanos);
        }
        double logQ = Math.log(endPerNano / startPerNano);
        if (logQ == 0) {
            return startPerNano * t;
        }
        return startPerNano * durationNanos * Math.expm1(logQ * t / durationNanos) / logQ;
    }

    /** The inverse of Lambda. */
    private double timeOf(double lambda) {
        if (lambda >= rampIntegral) {
            return durationNanos + (lambda - rampIntegral) / endPerNano;
        }
        if (strategy == RampStrategy.LINEAR) {
            double a = (endPerNano - startPerNano) / (2 * durationNanos);
            // Root of a t^2 + r0 t - lambda = 0 in the cancellation-free form, valid for a = 0 and r0 = 0.
            return 2 * lambda / (startPerNano + Math.sqrt(startPerNano * startPerNano + 4 * a * lambda));
        }
        double logQ = Math.log(endPerNano / startPerNano);
        if (logQ == 0) {
            return lambda / startPerNano;
        }
        return durationNanos / logQ * Math.log1p(lambda * logQ / (startPerNano * durationNanos));
    }
}
