package dev.infersim.queueing;

import java.util.Arrays;

/**
 * The two corrections that bend the birth-death chain below B towards the engine it stands for; both are
 * approximations, held by the simulator comparison (docs/queueing-chain.md).
 *
 * <p>Clump slowdown: for non-Poisson arrivals the completion rate below B is divided by how much longer the mean gap
 * between tokens is with the arrivals' own counts per iteration ({@link ArrivalCounts}) than with Poisson ones at the
 * same rate: bursty arrivals bring their prompts in clumps, whose prefill costs more than the same prompts spread out
 * once an iteration turns compute-bound, so they run larger batches.
 *
 * <p>Dispersion exponent kappa: the engine prefills the prompts of an iteration all at once and slows every running
 * request together, where the chain's rates spread that work over the batch; the chain's weights below B are raised
 * to kappa so its batch has the variance the engine's feedback gives ({@link BatchDispersion}).
 */
final class ChainCorrections {
    /** Bounds kappa of {@link #dispersionExponent} to [1/16, 16]: a loop that barely settles spreads the batch, not flattens it. */
    private static final double MIN_DISPERSION_EXPONENT = 1.0 / 16;

    private ChainCorrections() {
    }

    /**
     * kappa, the variance of the batch by {@link BatchDispersion} as the chain sees the engine over that as the engine
     * runs: raising the chain's weights below B to the power kappa keeps its mode and divides its variance by kappa.
     * The chain spreads a prompt's prefill over the batch as a share of the mean iteration (its iteration grows with n,
     * the arrivals' own spread left out); the engine prefills the prompts that arrived during an iteration all at once
     * in the next, slowing every running request together, which disperses the batch more the larger the share of time
     * prefill takes. Both sides use the same linear-noise approximation, so its own error cancels.
     */
    static double dispersionExponent(BatchingServer server, double arrivalRatePerS, double arrivalScv, double queueRatio,
                                     double[] states) {
        IterationTimes times = server.iterationTimes();
        int maxBatch = server.maxNumSeqs();
        if (maxBatch < 2) {
            return 1;
        }
        double mean = 0;
        for (int n = 1; n <= maxBatch; n++) {
            mean += n * (n < maxBatch ? states[n] : states[maxBatch] / (1 - queueRatio));
        }
        int at = (int) Math.max(1, Math.min(maxBatch - 1, Math.round(mean)));
        double arrivalsPerIteration = arrivalRatePerS * times.meanSeconds(at);
        double prefillFeedback = arrivalRatePerS * (times.prefillSeconds(at, 2) - times.prefillSeconds(at, 1));
        double decodeFeedback = arrivalRatePerS * (times.decodeSeconds(at + 1) - times.decodeSeconds(at));
        double engine = BatchDispersion.variance(arrivalsPerIteration, prefillFeedback, decodeFeedback, arrivalScv,
                server.outputTokens());
        double chain = BatchDispersion.variance(arrivalsPerIteration, 0,
                arrivalRatePerS * (times.meanSeconds(at + 1) - times.meanSeconds(at)), 1, server.outputTokens());
        if (!(chain > 0 && engine > 0)) {
            return 1;
        }
        return Math.max(MIN_DISPERSION_EXPONENT, Math.min(1 / MIN_DISPERSION_EXPONENT, chain / engine));
    }

    /**
     * How much longer the iterations with n running are under these arrivals than under Poisson ones at the same rate:
     * the stationary mean gap with the arrivals' own counts over that with Poisson counts. Bursty arrivals bring their
     * prompts in clumps, whose prefill costs more than the same prompts spread out once an iteration turns
     * compute-bound. Evaluated at up to 33 batch sizes across the states the Poisson chain visits, linear in between.
     */
    static double[] clumpSlowdown(int maxBatch, double arrivalRatePerS, IterationEpisodes episodes,
                                  double[] poissonStates) {
        double[] slowdown = new double[maxBatch + 1];
        Arrays.fill(slowdown, 1);
        int first = maxBatch;
        int last = 0;
        for (int n = 1; n < maxBatch; n++) {
            if (poissonStates[n] > 1e-9) {
                first = Math.min(first, n);
                last = n;
            }
        }
        if (first > last) {
            return slowdown;
        }
        ArrivalCounts poisson = new ArrivalCounts(arrivalRatePerS, 1);
        int step = Math.max(1, (last - first) / 32);
        int previous = -1;
        for (int n = first; ; n = Math.min(last, n + step)) {
            double poissonGap = episodes.meanGapSeconds(n, episodes.stationary(n, episodes.transition(n, poisson), poisson));
            slowdown[n] = Math.max(1e-3, episodes.meanGapSeconds(n, episodes.promptsPerIteration(n)) / poissonGap);
            if (previous >= 0) {
                for (int m = previous + 1; m < n; m++) {
                    slowdown[m] = slowdown[previous] + (slowdown[n] - slowdown[previous]) * (m - previous) / (n - previous);
                }
            } else {
                Arrays.fill(slowdown, 1, n, slowdown[n]);
            }
            previous = n;
            if (n == last) {
                break;
            }
        }
        Arrays.fill(slowdown, last + 1, maxBatch, slowdown[last]);
        return slowdown;
    }
}
