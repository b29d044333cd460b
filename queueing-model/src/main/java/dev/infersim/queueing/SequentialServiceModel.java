package dev.infersim.queueing;

import org.apache.commons.math3.analysis.solvers.BrentSolver;

import java.util.function.DoubleUnaryOperator;

/**
 * A server that runs one request at a time (vLLM with --max-num-seqs 1): the G/G/1 FCFS queue whose service time S
 * is a request's prefill plus its decode steps, distributed as the workload's lengths make it.
 *
 * <p>Mean wait: Pollaczek-Khinchine for Poisson arrivals (exact, {@link MG1Queue}); otherwise Kingman's formula (the
 * Allen-Cunneen G/G/1 form) as Whitt's Queueing Network Analyzer applies it, with the Kraemer and Langenbach-Belz
 * correction for smooth arrivals only:
 * <pre>
 *   E[Wq] = rho / (1 - rho) (ca^2 + cs^2) / 2 E[S] g,
 *   g = exp(-2 (1 - rho) (1 - ca^2)^2 / (3 rho (ca^2 + cs^2)))   for ca^2 &lt; 1,   g = 1 otherwise.
 * </pre>
 * Wait distribution: P(Wq > t) = C e^{-theta t}, with theta the Cramer-Lundberg decay rate, the positive root of
 * E[e^{theta S}] E[e^{-theta A}] = 1 (A gamma distributed gaps of mean 1 / lambda and shape 1 / ca^2), and C = theta
 * E[Wq] so the mean is kept. A request's wait is independent of its own service, so TTFT = Wq + S_first and
 * E2EL = Wq + S are convolutions.
 *
 * <p>Sources: Kleinrock 1975, Vol. 1, ch. 5; Kingman 1961; W. Kraemer and M. Langenbach-Belz, "Approximate formulae
 * for the delay in the queueing system GI/G/1", 8th International Teletraffic Congress, 1976; W. Whitt, "The Queueing
 * Network Analyzer", Bell System Technical Journal 62(9), 1983; S. Asmussen, Applied
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
                : whittQna();
        this.decayRatePerS = lundbergRoot();
        this.probabilityPositive = Math.min(utilization(), decayRatePerS * meanWait);
    }

    private double whittQna() {
        double rho = utilization();
        double ca = arrivalScv;
        double cs = service.squaredCoefficientOfVariation();
        double g = ca < 1 ? Math.exp(-2 * (1 - rho) * (1 - ca) * (1 - ca) / (3 * rho * (ca + cs))) : 1;
        return new KingmanGG1(arrivalRatePerS, service.mean(), ca, cs).meanWaitSeconds() * g;
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

    /** The probability of a positive wait in the exponential-tail form, at most rho. */
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
