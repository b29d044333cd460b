package dev.infersim.queueing;

/**
 * Steady-state summary of a queue: the figures every model in this package can give.
 * The mean numbers follow from the mean times by {@link LittlesLaw}.
 *
 * @param arrivalRatePerS lambda, requests per second
 * @param utilization offered load per server, lambda / (c mu), in [0, 1)
 * @param probabilityOfWait probability an arrival has to queue (exact or, for approximations, the model's estimate)
 * @param meanWaitSeconds mean time in the queue before service starts
 * @param meanSojournSeconds mean time in the system, queue plus service
 * @param meanNumberWaiting mean queue length, lambda * meanWaitSeconds
 * @param meanNumberInSystem mean number in the system, lambda * meanSojournSeconds
 */
public record QueueMetrics(
        double arrivalRatePerS,
        double utilization,
        double probabilityOfWait,
        double meanWaitSeconds,
        double meanSojournSeconds,
        double meanNumberWaiting,
        double meanNumberInSystem) {

    public QueueMetrics {
        Checks.positive("arrivalRatePerS", arrivalRatePerS);
        Checks.nonNegative("utilization", utilization);
        Checks.nonNegative("probabilityOfWait", probabilityOfWait);
        Checks.nonNegative("meanWaitSeconds", meanWaitSeconds);
        Checks.nonNegative("meanSojournSeconds", meanSojournSeconds);
        Checks.nonNegative("meanNumberWaiting", meanNumberWaiting);
        Checks.nonNegative("meanNumberInSystem", meanNumberInSystem);
        if (meanSojournSeconds < meanWaitSeconds) {
            throw new IllegalArgumentException("meanSojournSeconds " + meanSojournSeconds
                    + " must be >= meanWaitSeconds " + meanWaitSeconds);
        }
    }

    /** Builds the summary, deriving the mean numbers by Little's law. */
    static QueueMetrics of(double arrivalRatePerS, double utilization, double probabilityOfWait,
            double meanWaitSeconds, double meanSojournSeconds) {
        return new QueueMetrics(arrivalRatePerS, utilization, probabilityOfWait, meanWaitSeconds,
                meanSojournSeconds, LittlesLaw.meanNumber(arrivalRatePerS, meanWaitSeconds),
                LittlesLaw.meanNumber(arrivalRatePerS, meanSojournSeconds));
    }
}
