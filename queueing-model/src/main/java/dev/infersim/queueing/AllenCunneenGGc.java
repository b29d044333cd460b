package dev.infersim.queueing;

/**
 * The Allen-Cunneen approximation for the G/G/c queue: the M/M/c mean wait scaled by the
 * variability of arrivals and service, E[Wq] ~ (C(c, a) / (c mu - lambda)) (ca^2 + cs^2) / 2,
 * with C the Erlang C probability of waiting. With c = 1 it reduces to Kingman's formula.
 * Source: A. O. Allen, Probability, Statistics, and Queueing Theory with Computer Science
 * Applications (2nd ed., Academic Press, 1990), on G/G/c approximations.
 *
 * @param arrivalRatePerS lambda, requests per second
 * @param serviceRatePerS mu = 1 / E[S] of one server
 * @param servers c
 * @param arrivalScv ca^2 of interarrival times (1 for Poisson)
 * @param serviceScv cs^2 of service times (1 exponential, 0 constant)
 */
public record AllenCunneenGGc(double arrivalRatePerS, double serviceRatePerS, int servers,
        double arrivalScv, double serviceScv) {

    public AllenCunneenGGc {
        Checks.nonNegative("arrivalScv", arrivalScv);
        Checks.nonNegative("serviceScv", serviceScv);
        // The M/M/c queue with the same rates checks lambda, mu, c and stability with the same messages.
        new MMcQueue(arrivalRatePerS, serviceRatePerS, servers);
    }

    public double utilization() {
        return markovian().utilization();
    }

    /** The Erlang C probability of waiting, used unchanged by the approximation. */
    public double probabilityOfWait() {
        return markovian().probabilityOfWait();
    }

    public double meanWaitSeconds() {
        return markovian().meanWaitSeconds() * (arrivalScv + serviceScv) / 2;
    }

    public double meanSojournSeconds() {
        return meanWaitSeconds() + 1 / serviceRatePerS;
    }

    public QueueMetrics metrics() {
        return QueueMetrics.of(arrivalRatePerS, utilization(), probabilityOfWait(), meanWaitSeconds(),
                meanSojournSeconds());
    }

    private MMcQueue markovian() {
        return new MMcQueue(arrivalRatePerS, serviceRatePerS, servers);
    }
}
