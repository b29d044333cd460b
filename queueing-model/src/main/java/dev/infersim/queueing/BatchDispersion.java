package dev.infersim.queueing;

/**
 * The variance of the number of running requests by the linear-noise approximation of the engine's own feedback, in
 * iteration time. An iteration carries the K prompts that arrived during the one before it, so it lasts
 * tau = d + c K + d' n, and the next one carries K' ~ (arrivals in tau): a prompt begets x = lambda c prompts in the
 * next iteration, a running request y = lambda d'. A request runs for L iterations, so
 * n_i = sum_j P(L > j) K_{i-j}. Linearised around the mean, K_{i+1} = x K_i + y n_i + e_i, with innovations of variance
 * ca^2 E[K] (the arrivals' own spread over the long windows n sums over). The variance of n is E[K] ca^2 sum h(m)^2 for
 * h the response of n to one innovation, plus E[K] sum P(L > j) P(L <= j) for which of the admitted are still running.
 *
 * <p>The birth-death chain's variance is n / (1 - lambda dD/dn), D = E[L] tau(n): it treats the prefill of a prompt as
 * a share n / E[L] of work spread over the batch, whereas the engine does it all at once, in the iteration after the
 * prompt arrives, slowing every running request together. For fixed output lengths, where every running request
 * arrived within the last D, that makes the variance n / (1 - x)^2, and x is the share of time spent on prefill: a
 * prefill-heavy load disperses the batch far more than the chain says. Geometric lengths forget their arrival time and
 * disperse less. Checked against the simulator's time-weighted batch over bench/queueing's scenario matrix.
 */
final class BatchDispersion {

    /** Iterations followed at most; the response of a stable loop has died out long before. */
    private static final int MAX_ITERATIONS = 1 << 20;

    private BatchDispersion() {
    }

    /**
     * Var(n), the running requests.
     *
     * @param arrivalsPerIteration   E[K] = lambda E[tau]
     * @param prefillFeedback        x = lambda dtau/dK, the prompts one prompt's prefill lets arrive
     * @param decodeFeedback         y = lambda dtau/dn
     * @param arrivalScv             ca^2 of the gaps between arrivals
     * @param outputTokens           L, the iterations a request runs for
     * @return the variance, or infinity where the feedback loop does not settle
     */
    static double variance(double arrivalsPerIteration, double prefillFeedback, double decodeFeedback,
                           double arrivalScv, DiscreteDistribution outputTokens) {
        int atoms = outputTokens.size();
        int[] lengths = new int[atoms];
        for (int a = 0; a < atoms; a++) {
            lengths[a] = Math.max(1, (int) Math.round(outputTokens.value(a)));
        }
        int longest = lengths[atoms - 1];
        double[] k = new double[Math.min(MAX_ITERATIONS, 64 * longest + 4096)];
        double n = 0;
        double sumSquares = 0;
        double largest = 0;
        k[0] = 1;
        int m = 0;
        for (; m < k.length; m++) {
            // n(m) = n(m - 1) + K(m) - sum_a p_a K(m - L_a): admitted now, less those that have run their L iterations
            double departing = 0;
            for (int a = 0; a < atoms; a++) {
                if (m >= lengths[a]) {
                    departing += outputTokens.probability(a) * k[m - lengths[a]];
                }
            }
            n += k[m] - departing;
            sumSquares += n * n;
            largest = Math.max(largest, Math.abs(n));
            if (m + 1 < k.length) {
                k[m + 1] = prefillFeedback * k[m] + decodeFeedback * n;
            }
            if (m > longest && Math.abs(n) < 1e-9 * largest && Math.abs(k[m]) < 1e-9) {
                break;
            }
        }
        if (m == k.length) {
            return Double.POSITIVE_INFINITY;
        }
        return arrivalsPerIteration * (arrivalScv * sumSquares + stillRunningVariance(outputTokens));
    }

    /** sum_j P(L > j) P(L <= j): the spread of whether a request admitted j iterations ago still runs. */
    private static double stillRunningVariance(DiscreteDistribution outputTokens) {
        double sum = 0;
        double below = 0;
        double previous = 0;
        for (int a = 0; a < outputTokens.size(); a++) {
            double value = Math.max(1, Math.round(outputTokens.value(a)));
            sum += (value - previous) * below * (1 - below);
            below += outputTokens.probability(a);
            previous = value;
        }
        return sum;
    }
}
