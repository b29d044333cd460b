package dev.infersim.queueing;

import org.apache.commons.math3.analysis.solvers.BrentSolver;

import java.util.function.DoubleUnaryOperator;

/**
 * A server that runs one request at a time (vLLM with --max-num-seqs 1): the G/G/1 FCFS queue whose service time S
 * is a request's prefill plus its decode steps, distributed as the workload's lengths make it.
 *
 * <p>Mean wait: Pollaczek-Khinchine for Poisson arrivals (exact, {@link MG1Queue}); otherwise the exact GI/M/1 wait
 * for the gamma gaps, scaled to the service's variability by Kingman's ratio:
 * <pre>
 *   sigma = A*(mu (1 - sigma)),  A*(s) = (1 + s / (k lambda))^{-k},  k = 1 / ca^2,  mu = 1 / E[S],
 *   E[Wq] = sigma / (mu (1 - sigma)) (ca^2 + cs^2) / (ca^2 + 1).
 * </pre>
 * Exact for GI/M/1 (cs^2 = 1) and for M/G/1 (ca^2 = 1, where it is Pollaczek-Khinchine), and exact in heavy traffic
 * (Kingman's limit). Kingman's formula alone takes only ca^2 from the gaps; for gamma gaps of ca^2 = 4 at rho = 0.7 it
 * is 14% short, because the shape of the gaps (many near 0, a few very long) matters beyond their variance.
 * <p>Wait distribution: P(Wq > t) = C e^{-theta t}, with theta the Cramer-Lundberg decay rate, the positive root of
 * E[e^{theta S}] E[e^{-theta A}] = 1 (A gamma distributed gaps of mean 1 / lambda and shape 1 / ca^2), and C = theta
 * E[Wq] so the mean is kept. A request's wait is independent of its own service, so TTFT = Wq + S_first and
 * E2EL = Wq + S are convolutions.
 *
 * <p>Sources: Kleinrock 1975, Vol. 1, ch. 5 (M/G/1) and 6.4 (GI/M/1); Kingman 1961; S. Asmussen, Applied
 * Probability and Queues (2nd ed., Springer, 2003), ch. XIII (Cramer-Lundberg).
 */
public final class SequentialServiceModel implements LatencyModel {

    private final double arrivalRatePerS;
    private final double arrivalScv;
    private final DiscreteDistribution service;
    private final DiscreteDistribution firstToken;
    private final DiscreteDistribution tpot;
    private final double meanWait;
    private final double decayRatePerS;
    private final double probabilityPositive;

    /**
     * @param arrivalRatePerS lambda
     * @param arrivalScv      ca^2 of the gaps between arrivals: 1 Poisson, 1 / burstiness for vLLM's gamma arrivals
     * @param service         S, a request's whole service time
     * @param firstToken      the part of S up to its first token (the prefill)
     * @param tpot            a request's (S - S_first) / (L - 1)
     */
    public SequentialServiceModel(double arrivalRatePerS, double arrivalScv, DiscreteDistribution service,
            DiscreteDistribution firstToken, DiscreteDistribution tpot) {
        this.arrivalRatePerS = Checks.positive("arrivalRatePerS", arrivalRatePerS);
        this.arrivalScv = Checks.positive("arrivalScv", arrivalScv);
        this.service = service;
        this.firstToken = firstToken;
        this.tpot = tpot;
        double mean = Checks.positive("mean service", service.mean());
        if (arrivalRatePerS * mean >= 1) {
            throw new UnstableQueueException(arrivalRatePerS, 1 / mean, "1/E[S]");
        }
        this.meanWait = arrivalScv == 1
                ? new MG1Queue(arrivalRatePerS, new ServiceTimeMoments(mean, service.moment(2), service.moment(3))).meanWaitSeconds()
                : gammaArrivalWait();
        this.decayRatePerS = lundbergRoot();
        // P(Wq > 0) = rho exactly for Poisson arrivals (PASTA); bursty arrivals find the server busy more often
        this.probabilityPositive = Math.min(arrivalScv == 1 ? utilization() : 1, decayRatePerS * meanWait);
    }

    /** E[Wq] of GI/M/1 with the gamma gaps and mean service E[S], scaled by (ca^2 + cs^2) / (ca^2 + 1). */
    private double gammaArrivalWait() {
        double mu = 1 / service.mean();
        double sigma = ArrivalCounts.busyRoot(arrivalRatePerS, arrivalScv, mu);
        double cs = service.squaredCoefficientOfVariation();
        return sigma / (mu * (1 - sigma)) * (arrivalScv + cs) / (arrivalScv + 1);
    }

    /** The theta > 0 with ln E[e^{theta S}] = k ln(1 + theta / (k lambda)), k = 1 / ca^2. */
    private double lundbergRoot() {
        double k = 1 / arrivalScv;
        DoubleUnaryOperator f =
                theta -> service.logMomentGenerating(theta) - k * Math.log1p(theta / (k * arrivalRatePerS));
        double upper = 1 / service.max();
        for (int i = 0; i < 200 && f.applyAsDouble(upper) <= 0; i++) {
            upper *= 2;
        }
        double lower = upper / 2;
        while (lower > 1e-12 / service.max() && f.applyAsDouble(lower) > 0) {
            lower /= 2;
        }
        return new BrentSolver(1e-14, 1e-12 * upper).solve(500, f::applyAsDouble, lower, upper);
    }

    @Override
    public double arrivalRatePerS() {
        return arrivalRatePerS;
    }

    /** rho = lambda E[S]. */
    @Override
    public double utilization() {
        return arrivalRatePerS * service.mean();
    }

    /** The probability of a positive wait in the exponential-tail form, at most rho for Poisson arrivals. */
    @Override
    public double probabilityOfWait() {
        return probabilityPositive;
    }

    @Override
    public double meanQueueingDelaySeconds() {
        return meanWait;
    }

    /** The Cramer-Lundberg decay rate theta of the wait's tail, per second. */
    public double waitDecayRatePerS() {
        return decayRatePerS;
    }

    /** The service-time distribution this queue was built from. */
    public DiscreteDistribution service() {
        return service;
    }

    public double arrivalScv() {
        return arrivalScv;
    }

    private double waitAtMost(double t) {
        return t < 0 ? 0 : 1 - probabilityPositive * Math.exp(-decayRatePerS * t);
    }

    @Override
    public double queueingDelayPercentileSeconds(double p) {
        return ExponentialTail.percentileSeconds(probabilityPositive, decayRatePerS, p);
    }

    /** P(Wq + X <= t) for X independent of the wait. */
    private double convolvedAtMost(DiscreteDistribution x, double t) {
        double p = 0;
        for (int i = 0; i < x.size(); i++) {
            p += x.probability(i) * waitAtMost(t - x.value(i));
        }
        return p;
    }

    @Override
    public double meanTtftSeconds() {
        return meanWait + firstToken.mean();
    }

    @Override
    public double ttftPercentileSeconds(double p) {
        Checks.openUnitInterval("percentile", p);
        return ContinuousBatchingModel.solve(t -> convolvedAtMost(firstToken, t), p, firstToken.value(0));
    }

    @Override
    public double meanTpotSeconds() {
        return tpot.mean();
    }

    @Override
    public double tpotPercentileSeconds(double p) {
        return tpot.quantile(p);
    }

    /** One request decodes alone, so its gaps are its decode steps, whose spread within a request is small. */
    @Override
    public double meanItlSeconds() {
        return tpot.mean();
    }

    @Override
    public double itlPercentileSeconds(double p) {
        return tpot.quantile(p);
    }

    @Override
    public double meanE2elSeconds() {
        return meanWait + service.mean();
    }

    @Override
    public double e2elPercentileSeconds(double p) {
        Checks.openUnitInterval("percentile", p);
        return ContinuousBatchingModel.solve(t -> convolvedAtMost(service, t), p, service.value(0));
    }

    @Override
    public double meanBatchSize() {
        return utilization();
    }

    /** Little's law on the queue. */
    @Override
    public double meanNumberWaiting() {
        return arrivalRatePerS * meanWait;
    }

    /** Little's law on the whole system. */
    @Override
    public double meanNumberInSystem() {
        return arrivalRatePerS * meanE2elSeconds();
    }
}
