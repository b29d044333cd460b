package dev.infersim.queueing;

/**
 * Kingman's approximation for the G/G/1 queue:
 * E[Wq] ~ (rho / (1 - rho)) ((ca^2 + cs^2) / 2) E[S], where ca^2 and cs^2 are the squared
 * coefficients of variation of the interarrival and service times. Exact for M/M/1 and M/G/1
 * (ca^2 = 1), and asymptotically exact in heavy traffic.
 * Source: J. F. C. Kingman, "The single server queue in heavy traffic",
 * Proc. Cambridge Philosophical Society 57(4), 1961.
 *
 * @param arrivalRatePerS lambda, requests per second
 * @param meanServiceSeconds E[S]
 * @param arrivalScv ca^2 = Var[A] / E[A]^2 of interarrival times (1 for Poisson)
 * @param serviceScv cs^2 = Var[S] / E[S]^2 (1 exponential, 0 constant)
 */
public record KingmanGG1(double arrivalRatePerS, double meanServiceSeconds, double arrivalScv, double serviceScv) {

    public KingmanGG1 {
        Checks.positive("arrivalRatePerS", arrivalRatePerS);
        Checks.positive("meanServiceSeconds", meanServiceSeconds);
        Checks.nonNegative("arrivalScv", arrivalScv);
        Checks.nonNegative("serviceScv", serviceScv);
        if (arrivalRatePerS * meanServiceSeconds >= 1) {
            throw new UnstableQueueException(arrivalRatePerS, 1 / meanServiceSeconds, "1/E[S]");
        }
    }

    public double utilization() {
        return arrivalRatePerS * meanServiceSeconds;
    }

    public double meanWaitSeconds() {
        double rho = utilization();
        return rho / (1 - rho) * (arrivalScv + serviceScv) / 2 * meanServiceSeconds;
    }

    public double meanSojournSeconds() {
        return meanWaitSeconds() + meanServiceSeconds;
    }

    /** Metrics, with the approximation's P(wait) taken as rho (exact for Poisson arrivals). */
    public QueueMetrics metrics() {
        return QueueMetrics.of(arrivalRatePerS, utilization(), utilization(), meanWaitSeconds(), meanSojournSeconds());
    }
}
