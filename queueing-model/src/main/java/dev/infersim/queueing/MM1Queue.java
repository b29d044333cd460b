package dev.infersim.queueing;

/**
 * The M/M/1 queue: Poisson arrivals at rate lambda, one FCFS server with exponential service
 * at rate mu. With rho = lambda / mu and theta = mu - lambda: mean wait rho / theta, mean sojourn
 * 1 / theta, P(Wq > t) = rho exp(-theta t), sojourn time exponential with rate theta.
 * Source: L. Kleinrock, Queueing Systems, Vol. 1: Theory (Wiley, 1975), ch. 3;
 * Gross, Shortle, Thompson and Harris, Fundamentals of Queueing Theory (4th ed., Wiley, 2008).
 *
 * @param arrivalRatePerS lambda, requests per second
 * @param serviceRatePerS mu, requests per second; must exceed lambda
 */
public record MM1Queue(double arrivalRatePerS, double serviceRatePerS) {

    public MM1Queue {
        Checks.positive("arrivalRatePerS", arrivalRatePerS);
        Checks.positive("serviceRatePerS", serviceRatePerS);
        if (arrivalRatePerS >= serviceRatePerS) {
            throw new UnstableQueueException(arrivalRatePerS, serviceRatePerS, "mu");
        }
    }

    /** rho = lambda / mu, also the probability that an arrival waits. */
    public double utilization() {
        return arrivalRatePerS / serviceRatePerS;
    }

    public double meanWaitSeconds() {
        return utilization() / decayRatePerS();
    }

    public double meanSojournSeconds() {
        return 1 / decayRatePerS();
    }

    public double probabilityWaitExceeds(double tSeconds) {
        return ExponentialTail.exceedance(utilization(), decayRatePerS(), tSeconds);
    }

    /** The p-quantile of the queueing delay: max(0, ln(rho / (1 - p)) / (mu - lambda)). */
    public double waitPercentileSeconds(double p) {
        return ExponentialTail.percentileSeconds(utilization(), decayRatePerS(), p);
    }

    /** The p-quantile of the sojourn time, which is exponential with rate mu - lambda. */
    public double sojournPercentileSeconds(double p) {
        return ExponentialTail.percentileSeconds(1, decayRatePerS(), p);
    }

    public QueueMetrics metrics() {
        return QueueMetrics.of(arrivalRatePerS, utilization(), utilization(), meanWaitSeconds(), meanSojournSeconds());
    }

    private double decayRatePerS() {
        return serviceRatePerS - arrivalRatePerS;
    }
}
