package dev.infersim.queueing;

import org.apache.commons.math3.analysis.solvers.BrentSolver;

/**
 * The M/M/c queue: Poisson arrivals at rate lambda, c FCFS servers each exponential at rate mu.
 * With a = lambda / mu, C = Erlang C(c, a) and theta = c mu - lambda: P(wait) = C, mean wait
 * C / theta, P(Wq > t) = C exp(-theta t). The sojourn time is Wq plus an independent Exp(mu)
 * service, so P(T > t) = (1 - C) e^{-mu t} + C P(Exp(theta) + Exp(mu) > t).
 * Source: Gross, Shortle, Thompson and Harris, Fundamentals of Queueing Theory (4th ed., Wiley, 2008);
 * Kleinrock 1975, Vol. 1, ch. 3.
 *
 * @param arrivalRatePerS lambda, requests per second
 * @param serviceRatePerS mu, the rate of one server, requests per second
 * @param servers c
 */
public record MMcQueue(double arrivalRatePerS, double serviceRatePerS, int servers) {

    public MMcQueue {
        Checks.positive("arrivalRatePerS", arrivalRatePerS);
        Checks.positive("serviceRatePerS", serviceRatePerS);
        Checks.positive("servers", servers);
        if (arrivalRatePerS >= servers * serviceRatePerS) {
            throw new UnstableQueueException(arrivalRatePerS, servers * serviceRatePerS,
                    "c*mu = " + servers + "*" + serviceRatePerS);
        }
    }

    /** a = lambda / mu, in erlangs. */
    public double offeredLoadErlangs() {
        return arrivalRatePerS / serviceRatePerS;
    }

    /** rho = lambda / (c mu). */
    public double utilization() {
        return offeredLoadErlangs() / servers;
    }

    /** Erlang C. */
    public double probabilityOfWait() {
        return ErlangC.probabilityOfWait(servers, offeredLoadErlangs());
    }

    public double meanWaitSeconds() {
        return probabilityOfWait() / decayRatePerS();
    }

    public double meanSojournSeconds() {
        return meanWaitSeconds() + 1 / serviceRatePerS;
    }

    public double probabilityWaitExceeds(double tSeconds) {
        return ExponentialTail.exceedance(probabilityOfWait(), decayRatePerS(), tSeconds);
    }

    /** The p-quantile of the queueing delay: max(0, ln(C / (1 - p)) / (c mu - lambda)). */
    public double waitPercentileSeconds(double p) {
        return ExponentialTail.percentileSeconds(probabilityOfWait(), decayRatePerS(), p);
    }

    public double probabilitySojournExceeds(double tSeconds) {
        Checks.nonNegative("tSeconds", tSeconds);
        double waitProbability = probabilityOfWait();
        double serviceOnly = Math.exp(-serviceRatePerS * tSeconds);
        return (1 - waitProbability) * serviceOnly
                + waitProbability * hypoexponentialExceedance(decayRatePerS(), serviceRatePerS, tSeconds);
    }

    /** The p-quantile of the sojourn time, by Brent's method on the closed-form tail. */
    public double sojournPercentileSeconds(double p) {
        Checks.openUnitInterval("percentile", p);
        double upper = 1 / Math.min(serviceRatePerS, decayRatePerS());
        while (probabilitySojournExceeds(upper) > 1 - p) {
            upper *= 2;
        }
        return new BrentSolver(1e-12, upper * 1e-12)
                .solve(200, t -> probabilitySojournExceeds(t) - (1 - p), 0, upper);
    }

    public QueueMetrics metrics() {
        return QueueMetrics.of(arrivalRatePerS, utilization(), probabilityOfWait(), meanWaitSeconds(),
                meanSojournSeconds());
    }

    private double decayRatePerS() {
        return servers * serviceRatePerS - arrivalRatePerS;
    }

    /**
     * P(X + Y > t) for independent exponentials with the given rates. The sum is symmetric, so
     * with slow = min and fast = max it is e^{-slow t} (1 + slow (1 - e^{-(fast - slow) t}) / (fast - slow)),
     * written with expm1 so it stays accurate, and tending to (1 + slow t) e^{-slow t} as the rates meet.
     */
    static double hypoexponentialExceedance(double firstRate, double secondRate, double tSeconds) {
        double slow = Math.min(firstRate, secondRate);
        double gap = Math.max(firstRate, secondRate) - slow;
        double x = gap * tSeconds;
        double ratio = x < 1e-12 ? tSeconds : -Math.expm1(-x) / gap;
        return Math.exp(-slow * tSeconds) * (1 + slow * ratio);
    }
}
