package dev.infersim.queueing;

/**
 * The M/G/1 queue: Poisson arrivals at rate lambda, one FCFS server with general service S.
 * Pollaczek-Khinchine: E[Wq] = lambda E[S^2] / (2 (1 - rho)), rho = lambda E[S].
 * Takacs' recurrence gives the second moment E[Wq^2] = 2 E[Wq]^2 + lambda E[S^3] / (3 (1 - rho)).
 * With constant service (M/D/1) the mean wait is half that of M/M/1 at the same load.
 * Source: Kleinrock 1975, Vol. 1, ch. 5; L. Takacs, Introduction to the Theory of Queues
 * (Oxford, 1962); Gross, Shortle, Thompson and Harris, Fundamentals of Queueing Theory (4th ed., Wiley, 2008).
 *
 * @param arrivalRatePerS lambda, requests per second
 * @param service moments of the service time
 */
public record MG1Queue(double arrivalRatePerS, ServiceTimeMoments service) {

    public MG1Queue {
        Checks.positive("arrivalRatePerS", arrivalRatePerS);
        if (service == null) {
            throw new IllegalArgumentException("service moments must be given");
        }
        if (arrivalRatePerS * service.meanSeconds() >= 1) {
            throw new UnstableQueueException(arrivalRatePerS, 1 / service.meanSeconds(), "1/E[S]");
        }
    }

    /** M/D/1: constant service time. */
    public static MG1Queue deterministic(double arrivalRatePerS, double serviceSeconds) {
        return new MG1Queue(arrivalRatePerS, ServiceTimeMoments.deterministic(serviceSeconds));
    }

    /** rho = lambda E[S], also the probability that an arrival waits. */
    public double utilization() {
        return arrivalRatePerS * service.meanSeconds();
    }

    /** Pollaczek-Khinchine mean wait. */
    public double meanWaitSeconds() {
        return arrivalRatePerS * service.secondMomentSeconds2() / (2 * (1 - utilization()));
    }

    /** Takacs: E[Wq^2]. */
    public double waitSecondMomentSeconds2() {
        double meanWait = meanWaitSeconds();
        return 2 * meanWait * meanWait
                + arrivalRatePerS * service.thirdMomentSeconds3() / (3 * (1 - utilization()));
    }

    public double waitStdDevSeconds() {
        double meanWait = meanWaitSeconds();
        return Math.sqrt(Math.max(0, waitSecondMomentSeconds2() - meanWait * meanWait));
    }

    public double meanSojournSeconds() {
        return meanWaitSeconds() + service.meanSeconds();
    }

    /** Var[T] = Var[Wq] + Var[S]: under FCFS a customer's wait and its own service are independent. */
    public double sojournStdDevSeconds() {
        double waitSd = waitStdDevSeconds();
        double serviceVariance = service.secondMomentSeconds2() - service.meanSeconds() * service.meanSeconds();
        return Math.sqrt(waitSd * waitSd + Math.max(0, serviceVariance));
    }

    public QueueMetrics metrics() {
        return QueueMetrics.of(arrivalRatePerS, utilization(), utilization(), meanWaitSeconds(), meanSojournSeconds());
    }
}
