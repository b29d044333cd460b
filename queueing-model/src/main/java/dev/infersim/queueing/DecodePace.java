package dev.infersim.queueing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The pace of the tokens after the first in the continuous-batching chain: per-request TPOT, the token-weighted ITL,
 * the decode time E2EL adds to the TTFT, and the pace of the batch a request runs in for the E2EL's distribution. In a
 * batch of b an episode carrying K prompts lasts tau_K(b) and spans m_K(b) iterations, a token each
 * ({@link IterationEpisodes}); the stationary pace is E[tau_K] / E[m_K]. A request's first episodes are not stationary:
 * its first token ends its own prefill, so the next episode carries the prompts that arrived meanwhile, and the count
 * relaxes to the stationary one from there.
 */
final class DecodePace {
    /** Atoms of the length and pace distributions the E2EL sums over: enough for percentiles, cheap to sum. */
    static final int E2EL_ATOMS = 48;
    /** States less likely than this are left out of the per-request TPOT. */
    private static final double MIN_STATE_WEIGHT = 1e-12;
    /** Most episodes after a first token followed one by one before the stationary pace is taken for the rest. */
    private static final int MAX_TRACKED_EPISODES = 64;

    private final BatchingServer server;
    private final IterationTimes times;
    private final StationaryBatchChain chain;
    private final IterationEpisodes episodes;
    private DiscreteDistribution paceForE2el;
    /** Per request TPOT, and the mean time of a request's tokens after its first; built on first use. */
    private DiscreteDistribution tpot;
    private double meanDecodeSeconds;

    DecodePace(BatchingServer server, StationaryBatchChain chain, IterationEpisodes episodes) {
        this.server = server;
        this.times = server.iterationTimes();
        this.chain = chain;
        this.episodes = episodes;
    }

    /**
     * The pace of the batch a request runs in, per token after the first, as a distribution over the state it finds on
     * arrival: with n others in the system it runs in batches near b = min(n + 1, B), where an iteration carries the K
     * prompts that arrived during the last one ({@link IterationEpisodes#promptsPerIteration}) (at the limit B, the
     * B / E[L] that replace finishers: the mean iteration).
     */
    private DiscreteDistribution pace() {
        int maxBatch = server.maxNumSeqs();
        double[] values = new double[maxBatch + 1];
        double[] weights = new double[maxBatch + 1];
        for (int n = 0; n <= maxBatch; n++) {
            weights[n] = chain.stateWeight(n);
            int b = Math.min(n + 1, maxBatch);
            values[n] = weights[n] < 1e-15 ? times.meanSeconds(b) : meanIterationSeenSeconds(b);
        }
        return DiscreteDistribution.ofWeighted(values, weights);
    }

    /** {@link #pace()} condensed to {@link #E2EL_ATOMS} atoms; built on first use. */
    DiscreteDistribution paceForE2el() {
        if (paceForE2el == null) {
            paceForE2el = pace().condensed(E2EL_ATOMS);
        }
        return paceForE2el;
    }

    /**
     * The mean gap between tokens of a request decoding in a batch of b: E[tau_K(b)] / E[m_K(b)] over the stationary
     * count K of prompts an episode carries, m_K the iterations (each a token) it spans.
     */
    private double meanIterationSeenSeconds(int b) {
        if (b == server.maxNumSeqs()) {
            return times.meanSeconds(b);
        }
        return episodes.meanGapSeconds(b, episodes.promptsPerIteration(b));
    }

    /**
     * Per request, TPOT = (its decode time) / (L - 1), the mean of its own gaps, for L > 1 (a one-token request has no
     * TPOT). Its first gaps are not the batch's stationary pace: its first token ends its own prefill iteration, which
     * is long, so the next episode carries the prompts that arrived meanwhile, K_1 the arrivals in X, its prefill
     * (Poisson(lambda X) for Poisson arrivals); then K_{i+1}, the arrivals in tau_{K_i}(b), relaxes to the stationary
     * count. Episode i lasts
     * E[tau_{K_i}(b)] and gives E[m_{K_i}(b)] tokens. A short request's TPOT is mostly that first long gap, and each
     * request counts once.
     */
    private void buildTpot() {
        int maxBatch = server.maxNumSeqs();
        DiscreteDistribution lengths = server.outputTokens();
        int atoms = 0;
        for (int n = 0; n <= maxBatch; n++) {
            atoms += chain.stateWeight(n) >= MIN_STATE_WEIGHT ? 1 : 0;
        }
        double[] values = new double[atoms * lengths.size()];
        double[] weights = new double[values.length];
        double decode = 0;
        double total = 0;
        int a = 0;
        for (int n = 0; n <= maxBatch; n++) {
            double w = chain.stateWeight(n);
            if (w < MIN_STATE_WEIGHT) {
                continue;
            }
            total += w;
            int b = Math.min(n + 1, maxBatch);
            double[][] tracked = b == maxBatch ? new double[][] {{0, 1}, {0, times.meanSeconds(b)}} : episodesAfterFirstToken(n, b);
            for (int j = 0; j < lengths.size(); j++) {
                double later = lengths.value(j) - 1;
                double seconds = decodeSeconds(tracked, later);
                decode += w * lengths.probability(j) * seconds;
                values[a] = later > 0 ? seconds / later : 0;
                weights[a++] = later > 0 ? w * lengths.probability(j) : 0;
            }
        }
        meanDecodeSeconds = decode / total;
        tpot = DiscreteDistribution.ofWeighted(values, weights);
    }

    /**
     * The time of a request's first {@code tokens} tokens after its first, interpolated on the cumulative tokens and
     * seconds of the tracked episodes, then at the stationary pace (the slope of the last episode) for the rest.
     */
    private static double decodeSeconds(double[][] episodes, double tokens) {
        double[] cumulativeTokens = episodes[0];
        double[] cumulativeSeconds = episodes[1];
        int last = cumulativeTokens.length - 1;
        int i = 1;
        while (i < last && cumulativeTokens[i] < tokens) {
            i++;
        }
        double pace = (cumulativeSeconds[i] - cumulativeSeconds[i - 1]) / (cumulativeTokens[i] - cumulativeTokens[i - 1]);
        return cumulativeSeconds[i - 1] + (tokens - cumulativeTokens[i - 1]) * pace;
    }

    /**
     * The episodes after the first token of a request that found n running and decodes among b, as cumulative
     * [tokens, seconds] from 0: episode i gives E[m_{K_i}(b)] tokens in E[tau_{K_i}(b)], for i = 1, 2, ... until the pace
     * settles; the last is one token at the stationary pace.
     */
    private double[][] episodesAfterFirstToken(int n, int b) {
        double[] stationary = episodes.promptsPerIteration(b);
        int kMax = stationary.length - 1;
        double[] lengths = new double[kMax + 1];
        double[] iterations = new double[kMax + 1];
        double[][] transition = episodes.transitions(b);
        for (int k = 0; k <= kMax; k++) {
            lengths[k] = episodes.iterationWithPrompts(b, k);
            iterations[k] = episodes.iterationsWithPrompts(b, k);
        }
        double settled = meanIterationSeenSeconds(b);
        double[] k1 = promptsAfterOwnPrefill(n, kMax);
        double[] tokens = new double[MAX_TRACKED_EPISODES + 2];
        double[] seconds = new double[MAX_TRACKED_EPISODES + 2];
        double[] next = new double[kMax + 1];
        int i = 0;
        while (true) {
            double length = 0;
            double count = 0;
            for (int k = 0; k <= kMax; k++) {
                length += k1[k] * lengths[k];
                count += k1[k] * iterations[k];
            }
            i++;
            tokens[i] = tokens[i - 1] + count;
            seconds[i] = seconds[i - 1] + length;
            if (Math.abs(length / count - settled) <= 1e-4 * settled || i == MAX_TRACKED_EPISODES) {
                break;
            }
            Arrays.fill(next, 0);
            for (int k = 0; k <= kMax; k++) {
                for (int j = 0; j <= kMax && k1[k] > 0; j++) {
                    next[j] += k1[k] * transition[k][j];
                }
            }
            double[] swap = k1;
            k1 = next;
            next = swap;
        }
        i++;
        tokens[i] = tokens[i - 1] + 1;
        seconds[i] = seconds[i - 1] + settled;
        return new double[][] {Arrays.copyOf(tokens, i + 1), Arrays.copyOf(seconds, i + 1)};
    }

    /**
     * The distribution of the prompts that arrive during the prefill iteration of a request that found n running,
     * truncated to 0..kMax: the arrivals in X mixed over X = prefill(n, 1 + J), J the prompts admitted with it
     * ({@link IterationEpisodes#coAdmitted}), K the count in the iteration it landed in (length-biased, as in
     * {@link FirstTokenTime#walkPieces}); at n = 0 it is prefilled alone, and the window starts at its arrival.
     */
    private double[] promptsAfterOwnPrefill(int n, int kMax) {
        double[] mixed = new double[kMax + 1];
        double[] during = new double[kMax + 1];
        if (n == 0) {
            episodes.arrivals().afterArrivalInto(times.prefillSeconds(0, 1), mixed);
            return mixed;
        }
        double[] landed = episodes.landedIterations(n);
        double[] coAdmittedMix = new double[0];
        for (int k = 0; k < landed.length; k++) {
            double weight = landed[k];
            if (weight < 1e-12) {
                continue;
            }
            double[] others = episodes.coAdmitted(n, k);
            if (others.length > coAdmittedMix.length) {
                coAdmittedMix = Arrays.copyOf(coAdmittedMix, others.length);
            }
            for (int j = 0; j < others.length; j++) {
                coAdmittedMix[j] += weight * others[j];
            }
        }
        for (int j = 0; j < coAdmittedMix.length; j++) {
            if (coAdmittedMix[j] < 1e-12) {
                continue;
            }
            episodes.arrivals().fromRandomTimeInto(times.prefillSeconds(n, 1 + j), during);
            for (int m = 0; m <= kMax; m++) {
                mixed[m] += coAdmittedMix[j] * during[m];
            }
        }
        return mixed;
    }

    /** Per request TPOT, (its decode time) / (L - 1). */
    DiscreteDistribution tpot() {
        if (tpot == null) {
            buildTpot();
        }
        return tpot;
    }

    /** The mean time of a request's L - 1 tokens after its first (not (E[L] - 1) E[TPOT]: TPOT is a per-request ratio). */
    double meanDecodeSeconds() {
        tpot();
        return meanDecodeSeconds;
    }

    /**
     * The gaps between tokens, token-weighted: in a batch of b (probability pi_b, b tokens an iteration) a gap is one of
     * the m_K(b) iterations of an episode carrying K prompts ({@link IterationEpisodes#promptsPerIteration}),
     * tau_K(b) / m_K(b) on average.
     */
    DiscreteDistribution itl() {
        int maxBatch = server.maxNumSeqs();
        List<double[]> atoms = new ArrayList<>();
        for (int b = 1; b <= maxBatch; b++) {
            double pi = (b < maxBatch ? chain.probabilityOfState(b) : chain.timeAtLimit()) * b;
            if (pi < 1e-15) {
                continue;
            }
            double[] prompts = episodes.promptsPerIteration(b);
            for (int k = 0; k < prompts.length; k++) {
                double iterations = episodes.iterationsWithPrompts(b, k);
                atoms.add(new double[] {episodes.iterationWithPrompts(b, k) / iterations, pi * prompts[k] * iterations});
            }
        }
        double[] values = new double[atoms.size()];
        double[] weights = new double[atoms.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = atoms.get(i)[0];
            weights[i] = atoms.get(i)[1];
        }
        return DiscreteDistribution.ofWeighted(values, weights);
    }
}
