package dev.infersim.queueing;

import java.util.Arrays;

/**
 * The prompts the iterations of the continuous-batching chain carry, with n requests running: an engine admits requests
 * between iterations only, so an iteration prefills the K prompts that arrived during the previous one beside n decodes,
 * an episode of length tau_K(n) over m_K(n) iterations ({@link IterationTimes}). K' = the arrivals in tau_K(n) (Poisson
 * for Poisson arrivals, the renewal counts of {@link ArrivalCounts} for gamma gaps), so a long iteration lets many
 * prompts arrive, which makes the next one long: K is more dispersed than the count in a mean iteration. Also which
 * iteration an arrival lands in, and the prompts admitted with it. The first-token time ({@link FirstTokenTime}), the
 * decode pace ({@link DecodePace}) and the clump slowdown ({@link ChainCorrections}) read these laws; each is built on
 * first use and kept.
 */
final class IterationEpisodes {
    private final IterationTimes times;
    private final double arrivalRatePerS;
    private final double arrivalScv;
    private final ArrivalCounts arrivals;
    /** [n][k]: the prompts co-admitted with an arrival that finds n running in an iteration of k; built on use. */
    private final double[][][] coAdmitted;
    /** Per state, the stationary count of prompts an iteration carries, and its transition K -> K'; built on first use. */
    private final double[][] promptsPerIteration;
    private final double[][][] transitions;

    IterationEpisodes(IterationTimes times, int maxBatch, double arrivalRatePerS, double arrivalScv, ArrivalCounts arrivals) {
        this.times = times;
        this.arrivalRatePerS = arrivalRatePerS;
        this.arrivalScv = arrivalScv;
        this.arrivals = arrivals;
        this.promptsPerIteration = new double[maxBatch + 1][];
        this.transitions = new double[maxBatch + 1][][];
        this.coAdmitted = new double[maxBatch + 1][][];
    }

    /** The counts of the arrivals in a window, from a random time, an arrival's own position or after it. */
    ArrivalCounts arrivals() {
        return arrivals;
    }

    /**
     * The iteration an arrival that finds n running lands in, as the law of the K prompts it carries: an iteration is
     * landed in as often as arrivals fall in it, P(K = k) E[arrivals in it | K = k]. For Poisson arrivals that is its
     * length, lambda tau_K(n). Renewal arrivals remember: K counts the arrivals of the iteration before, and clumped
     * ones follow a full window with more, smooth ones with fewer. The conditional mean is taken by linear regression
     * on the counts of two adjacent windows of the equilibrium process, Cov(A1, A2) = (V(t1 + t2) - V(t1) - V(t2)) / 2
     * for V(t) the variance of the count in a window of t ({@link ArrivalCounts#countVariance}), t1 the mean iteration.
     */
    double[] landedIterations(int n) {
        double[] prompts = promptsPerIteration(n);
        double[] weights = new double[prompts.length];
        double previous = 0;
        for (int k = 0; k < prompts.length; k++) {
            previous += prompts[k] * iterationWithPrompts(n, k);
        }
        double before = arrivalRatePerS * previous;
        double beforeVariance = arrivals.countVariance(previous);
        double total = 0;
        for (int k = 0; k < prompts.length; k++) {
            double length = iterationWithPrompts(n, k);
            double expected = arrivalRatePerS * length;
            if (arrivalScv != 1 && beforeVariance > 0) {
                double covariance = (arrivals.countVariance(previous + length) - beforeVariance
                        - arrivals.countVariance(length)) / 2;
                expected = Math.max(0, expected + covariance / beforeVariance * (k - before));
            }
            weights[k] = prompts[k] * expected;
            total += weights[k];
        }
        for (int k = 0; k < weights.length; k++) {
            weights[k] /= total;
        }
        return weights;
    }

    /** tau_K(n): the episode of n decodes that prefills K prompts admitted together (one iteration, or their chunks). */
    double iterationWithPrompts(int n, int prompts) {
        return prompts == 0 ? times.decodeSeconds(n) : times.prefillSeconds(n, prompts);
    }

    /** m_K(n): the iterations that episode spans, each a token for the n decoding. */
    double iterationsWithPrompts(int n, int prompts) {
        return prompts == 0 ? 1 : times.prefillIterations(n, prompts);
    }

    /**
     * The stationary distribution of K, the prompts an iteration carries with n running: those that arrived during the
     * previous one, K' = the arrivals in tau_K(n) (Poisson(lambda tau_K(n)) for Poisson arrivals). A long iteration lets
     * many prompts arrive, which makes the next one long, so K is more dispersed than the count in a mean iteration:
     * runs of long iterations. Solved by power iteration from that count.
     */
    double[] promptsPerIteration(int n) {
        if (promptsPerIteration[n] == null) {
            transitions[n] = transition(n, arrivals);
            promptsPerIteration[n] = stationary(n, transitions[n], arrivals);
        }
        return promptsPerIteration[n];
    }

    /** P(K' = j | K = k) with n running, under these arrivals: the transition {@link #promptsPerIteration} is stationary for. */
    double[][] transitions(int n) {
        promptsPerIteration(n);
        return transitions[n];
    }

    /** P(K' = j | K = k): the prompts arriving during an iteration of n decodes and k prompts. */
    double[][] transition(int n, ArrivalCounts counts) {
        int kMax = Math.min(256, 2 * countLimit(arrivalRatePerS * times.meanSeconds(n)));
        double[][] transition = new double[kMax + 1][kMax + 1];
        for (int k = 0; k <= kMax; k++) {
            counts.fromRandomTimeInto(iterationWithPrompts(n, k), transition[k]);
        }
        return transition;
    }

    /** The stationary law of the transition, by power iteration from the count in a mean iteration. */
    double[] stationary(int n, double[][] transition, ArrivalCounts counts) {
        int kMax = transition.length - 1;
        double[] pi = new double[kMax + 1];
        counts.fromRandomTimeInto(times.meanSeconds(n), pi);
        double[] next = new double[kMax + 1];
        for (int step = 0; step < 200; step++) {
            Arrays.fill(next, 0);
            for (int k = 0; k <= kMax; k++) {
                for (int j = 0; j <= kMax && pi[k] > 0; j++) {
                    next[j] += pi[k] * transition[k][j];
                }
            }
            double change = 0;
            for (int j = 0; j <= kMax; j++) {
                change += Math.abs(next[j] - pi[j]);
            }
            double[] swap = pi;
            pi = next;
            next = swap;
            if (change < 1e-10) {
                break;
            }
        }
        return pi;
    }

    /** E[tau_K(n)] / E[m_K(n)] over a law of K: the mean gap between a decoding request's tokens. */
    double meanGapSeconds(int n, double[] prompts) {
        double seconds = 0;
        double tokens = 0;
        for (int k = 0; k < prompts.length; k++) {
            seconds += prompts[k] * iterationWithPrompts(n, k);
            tokens += prompts[k] * iterationsWithPrompts(n, k);
        }
        return seconds / tokens;
    }

    /** A count past which the arrivals in a window holding {@code mean} of them on average have negligible mass. */
    int countLimit(double mean) {
        double spread = Math.max(1, arrivalScv) * mean;
        return (int) Math.min(256, Math.ceil(mean + 10 * Math.sqrt(spread) + 10));
    }

    /**
     * The distribution of J, the other prompts that arrive during the iteration with K = k prompts an arrival finding n
     * running lands in: all of them are admitted with it. Poisson(lambda tau_K(n)) for Poisson arrivals; clumped for
     * bursty gaps, nearly none for smooth ones ({@link ArrivalCounts#aroundArrivalInto}).
     */
    double[] coAdmitted(int n, int k) {
        double[][] row = coAdmitted[n];
        if (row == null || row.length <= k) {
            row = row == null ? new double[k + 1][] : Arrays.copyOf(row, k + 1);
            coAdmitted[n] = row;
        }
        if (row[k] == null) {
            double length = iterationWithPrompts(n, k);
            row[k] = new double[countLimit(arrivalRatePerS * length) + 1];
            arrivals.aroundArrivalInto(length, row[k]);
        }
        return row[k];
    }
}
