package dev.infersim.queueing;

/**
 * The stationary birth-death chain of continuous batching and its admission wait. With n requests in the system
 * b = min(n, B) run; requests arrive at rate lambda and complete at rate mu_n = b / (E[L] tau(b)) ({@link BatchingServer}),
 * so p_n = p_0 prod_{k=1..n} lambda / mu_k, the states up to B weighted in log space so large batches cannot overflow.
 * Above B the rate is constant and the queue is GI/M/1: the tail is geometric with ratio sigma (lambda / mu_B for
 * Poisson arrivals) and summed in closed form. The weights below B take the two corrections of
 * {@link ChainCorrections}: the completion rate divided by the clump slowdown, and the weights raised to kappa.
 *
 * <p>An arrival that finds n >= B waits for n - B + 1 departures, each Exp(mu_B), so P(Wq > t) = P(wait)
 * e^{-mu_B (1 - sigma) t}; its time is scaled by Kingman's ratio (ca^2 + cs^2) / (ca^2 + 1) (the GI/M/1 wait already
 * carries the arrivals' variation, so only the service's departure from memoryless is scaled): fixed lengths with
 * Poisson arrivals wait half as long as geometric ones, as M/D/c against M/M/c.
 *
 * <p>Sources: Kleinrock 1975, Vol. 1, ch. 3 (birth-death chains); Kleinrock 1975, Vol. 1, sec. 6.4 (GI/M/m);
 * J. F. C. Kingman, "The single server queue in heavy traffic", 1961 (the (ca^2 + cs^2) scaling).
 */
final class StationaryBatchChain {

    private final BatchingServer server;
    /** lambda / lambda_max. */
    private final double tailRatio;
    /** sigma, the ratio of the geometric tail above B. */
    private final double queueRatio;
    private final double waitScale;
    /** p_0 .. p_B; states above B have p_B sigma^{n-B}. */
    private final double[] stateProbabilities;

    StationaryBatchChain(BatchingServer server, double tailRatio, double queueRatio, double waitScale,
                         double[] stateProbabilities) {
        this.server = server;
        this.tailRatio = tailRatio;
        this.queueRatio = queueRatio;
        this.waitScale = waitScale;
        this.stateProbabilities = stateProbabilities;
    }

    /**
     * p_n with the completion rate below B divided by slowdown[n] (1 for Poisson arrivals), the weights below B raised
     * to kappa, the tail above B of ratio {@code queueRatio}.
     */
    static double[] solve(BatchingServer server, double arrivalRatePerS, double queueRatio, double[] slowdown,
                          double kappa) {
        int maxBatch = server.maxNumSeqs();
        double[] logWeights = new double[maxBatch + 1];
        double largest = 0;
        for (int n = 1; n <= maxBatch; n++) {
            double slower = n < maxBatch ? slowdown[n] : 1;
            logWeights[n] = logWeights[n - 1] + kappa * Math.log(arrivalRatePerS * slower / server.departureRatePerS(n));
            largest = Math.max(largest, logWeights[n]);
        }
        double[] probabilities = new double[maxBatch + 1];
        double total = 0;
        for (int n = 0; n <= maxBatch; n++) {
            probabilities[n] = Math.exp(logWeights[n] - largest);
            total += probabilities[n];
        }
        total += probabilities[maxBatch] * queueRatio / (1 - queueRatio);
        for (int n = 0; n <= maxBatch; n++) {
            probabilities[n] /= total;
        }
        return probabilities;
    }

    /** lambda / lambda_max. */
    double tailRatio() {
        return tailRatio;
    }

    double queueRatio() {
        return queueRatio;
    }

    /** P(N = n), the stationary probability of n requests in the system (running plus waiting). */
    double probabilityOfState(int requestsInSystem) {
        int maxBatch = server.maxNumSeqs();
        if (requestsInSystem <= maxBatch) {
            return stateProbabilities[requestsInSystem];
        }
        return stateProbabilities[maxBatch] * Math.pow(queueRatio, requestsInSystem - maxBatch);
    }

    /**
     * The probability that an arrival finds the batch full and queues: P(N >= B) = p_B / (1 - sigma) in time, which an
     * arrival sees sigma / rho times as often (GI/M/1 above B: what arrivals see there is sigma / rho times the time
     * average, so bursty arrivals, which come when others just came, find the batch full more often; Poisson ones see
     * the time average).
     */
    double probabilityOfWait() {
        return timeAtLimit() * queueRatio / tailRatio;
    }

    /** P(N >= B) in time: the share of time the batch is full. */
    double timeAtLimit() {
        return stateProbabilities[server.maxNumSeqs()] / (1 - queueRatio);
    }

    /** How much likelier an arrival is than a random moment to find each state below B, so that all it finds sums to 1. */
    double belowLimitScale() {
        return (1 - probabilityOfWait()) / (1 - timeAtLimit());
    }

    /** P(an arrival finds n), the states at and above B lumped into n = B. */
    double stateWeight(int n) {
        return n < server.maxNumSeqs() ? belowLimitScale() * stateProbabilities[n] : probabilityOfWait();
    }

    /** E[min(N, B)]: the mean number of running requests. */
    double meanBatchSize() {
        double mean = 0;
        for (int n = 1; n < server.maxNumSeqs(); n++) {
            mean += n * stateProbabilities[n];
        }
        return mean + server.maxNumSeqs() * timeAtLimit();
    }

    /** E[(N - B)^+] = p_B sigma / (1 - sigma)^2. */
    double meanNumberWaiting() {
        double r = queueRatio;
        return stateProbabilities[server.maxNumSeqs()] * r / ((1 - r) * (1 - r));
    }

    /** Mean admission wait, P(an arrival waits) / (mu_B (1 - sigma)), scaled by Kingman's ratio. */
    double meanQueueingDelaySeconds() {
        return probabilityOfWait() / waitDecayRatePerS();
    }

    /** P(Wq > t) = P(an arrival waits) e^{-mu_B (1 - sigma) t}, the decay scaled alike. */
    double probabilityQueueingDelayExceeds(double tSeconds) {
        return ExponentialTail.exceedance(probabilityOfWait(), waitDecayRatePerS(), tSeconds);
    }

    /** The p-quantile of the admission wait: max(0, ln(P(wait) / (1 - p)) / (mu_B (1 - sigma))), scaled alike. */
    double queueingDelayPercentileSeconds(double p) {
        return ExponentialTail.percentileSeconds(probabilityOfWait(), waitDecayRatePerS(), p);
    }

    private double waitDecayRatePerS() {
        return server.saturationRatePerS() * (1 - queueRatio) / waitScale;
    }
}
