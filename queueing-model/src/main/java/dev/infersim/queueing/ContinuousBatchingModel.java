package dev.infersim.queueing;

import org.apache.commons.math3.analysis.solvers.BrentSolver;

/**
 * The stationary birth-death chain of continuous batching as limited, state-dependent
 * processor sharing. With n requests in the system b = min(n, B) run; requests arrive as a
 * Poisson stream at rate lambda and complete at rate mu_n = b / (E[L] tau(b)) (see
 * {@link BatchingServer}), so p_n = p_0 prod_{k=1..n} lambda / mu_k. The chain is exact for
 * geometric output lengths; for other lengths generalized processor sharing is insensitive
 * only while no request waits (Cohen 1979), so the queueing delay becomes an approximation.
 *
 * <p>Above B the rate is constant, so the tail is geometric with ratio r = lambda / mu_B and is
 * summed in closed form instead of truncated; the states up to B are weighted in log space so
 * large batches cannot overflow. An arrival that finds n >= B requests waits for n - B + 1
 * departures, each Exp(mu_B), so P(Wq > t) = sum_{n>=B} p_n P(Gamma(n - B + 1, mu_B) > t); a
 * geometric mixture of Erlang stages is exponential, so this equals P(N >= B) e^{-(mu_B - lambda) t},
 * the Erlang C shape, with closed-form percentiles.
 *
 * <p>Sources: J. W. Cohen, "The multiple phase service network with generalized processor
 * sharing", Acta Informatica 12, 1979; Kleinrock 1975, Vol. 1, ch. 3 (birth-death chains);
 * Li, Dai and Peng, arXiv 2504.07347 (stability lambda E[L] &lt; B / tau(B)); Yang, Jiao and Xu,
 * arXiv 2407.05347; Nie, Si and Zhou, arXiv 2605.04595 (KV-memory limit).
 */
public final class ContinuousBatchingModel {

    private final BatchingServer server;
    private final double arrivalRatePerS;
    /** p_0 .. p_B; states above B have p_B r^{n-B}. */
    private final double[] stateProbabilities;
    private final double tailRatio;

    ContinuousBatchingModel(BatchingServer server, double arrivalRatePerS) {
        this.server = server;
        this.arrivalRatePerS = Checks.positive("arrivalRatePerS", arrivalRatePerS);
        double saturation = server.saturationRatePerS();
        if (arrivalRatePerS >= saturation) {
            throw new UnstableQueueException(arrivalRatePerS, saturation, "B/(E[L]*tau(B))");
        }
        this.tailRatio = arrivalRatePerS / saturation;
        this.stateProbabilities = solveStationary();
    }

    private double[] solveStationary() {
        int maxBatch = server.maxNumSeqs();
        double[] logWeights = new double[maxBatch + 1];
        double largest = 0;
        for (int n = 1; n <= maxBatch; n++) {
            logWeights[n] = logWeights[n - 1] + Math.log(arrivalRatePerS / server.departureRatePerS(n));
            largest = Math.max(largest, logWeights[n]);
        }
        double[] probabilities = new double[maxBatch + 1];
        double total = 0;
        for (int n = 0; n <= maxBatch; n++) {
            probabilities[n] = Math.exp(logWeights[n] - largest);
            total += probabilities[n];
        }
        total += probabilities[maxBatch] * tailRatio / (1 - tailRatio);
        for (int n = 0; n <= maxBatch; n++) {
            probabilities[n] /= total;
        }
        return probabilities;
    }

    public BatchingServer server() {
        return server;
    }

    public double arrivalRatePerS() {
        return arrivalRatePerS;
    }

    /** lambda / lambda_max: the load relative to saturation (the Erlang utilization when beta = 0). */
    public double utilization() {
        return tailRatio;
    }

    /** P(N = n), the stationary probability of n requests in the system (running plus waiting). */
    public double probabilityOfState(int requestsInSystem) {
        if (requestsInSystem < 0) {
            throw new IllegalArgumentException("requestsInSystem must be >= 0, got " + requestsInSystem);
        }
        int maxBatch = server.maxNumSeqs();
        if (requestsInSystem <= maxBatch) {
            return stateProbabilities[requestsInSystem];
        }
        return stateProbabilities[maxBatch] * Math.pow(tailRatio, requestsInSystem - maxBatch);
    }

    /** P(N >= B): by PASTA, the probability that an arrival finds the batch full and queues. */
    public double probabilityOfWait() {
        return stateProbabilities[server.maxNumSeqs()] / (1 - tailRatio);
    }

    /** E[min(N, B)]: the mean number of running requests. */
    public double meanBatchSize() {
        return meanBelowMaxBatch() + server.maxNumSeqs() * probabilityOfWait();
    }

    /** E[N], running plus waiting. */
    public double meanNumberInSystem() {
        return meanBatchSize() + meanNumberWaiting();
    }

    /** E[(N - B)^+] = p_B r / (1 - r)^2. */
    public double meanNumberWaiting() {
        double r = tailRatio;
        return stateProbabilities[server.maxNumSeqs()] * r / ((1 - r) * (1 - r));
    }

    /** Mean admission wait, P(N >= B) / (mu_B - lambda). */
    public double meanQueueingDelaySeconds() {
        return probabilityOfWait() / waitDecayRatePerS();
    }

    /** P(Wq > t) = P(N >= B) e^{-(mu_B - lambda) t}. */
    public double probabilityQueueingDelayExceeds(double tSeconds) {
        return ExponentialTail.exceedance(probabilityOfWait(), waitDecayRatePerS(), tSeconds);
    }

    /** The p-quantile of the admission wait: max(0, ln(P(N >= B) / (1 - p)) / (mu_B - lambda)). */
    public double queueingDelayPercentileSeconds(double p) {
        return ExponentialTail.percentileSeconds(probabilityOfWait(), waitDecayRatePerS(), p);
    }

    /** Mean time in the system, E[N] / lambda by Little's law: the mean end-to-end latency (E2EL). */
    public double meanSojournSeconds() {
        return LittlesLaw.meanTimeSeconds(meanNumberInSystem(), arrivalRatePerS);
    }

    /**
     * Mean time per output token, averaged over all tokens: E[b] / (lambda E[L]). Little's law on
     * the running set gives E[b] = lambda E[L] t, t the mean time per token a request sees; it is
     * the token-weighted mean of tau(b) and differs from the cruder tau(E[b]) by the Jensen gap.
     * vLLM's mean TPOT averages per request first; the two agree when a request's batch
     * companions change slowly over its life.
     */
    public double meanTpotSeconds() {
        return meanBatchSize() / (arrivalRatePerS * server.meanOutputTokens());
    }

    /**
     * Mean wait of an arrival for the running iteration to end, when it finds a free batch slot:
     * an engine admits requests only between iterations, which the continuous-time chain ignores.
     * A Poisson arrival lands in the iterations of state n with the time fraction p_n and waits
     * for the end of the one it lands in, half of it on average; it lands in an iteration that
     * prefills a prompt with probability q ({@link #prefillTimeShare()}), else in one that only
     * decodes: sum_{n=1}^{B-1} p_n (q tau_pf + (1 - q) tau_dec(n)) / 2. (Arrivals finding the
     * batch full wait for a departure, which already ends on an iteration boundary.)
     */
    public double meanIterationBoundaryWaitSeconds() {
        return meanLandedIterationSeconds() / 2;
    }

    /**
     * Mean length of the iteration an arrival lands in when it finds a free slot, weighted by its state's probability:
     * sum_{n=1}^{B-1} p_n (q tau_pf + (1 - q) tau_dec(n)).
     */
    private double meanLandedIterationSeconds() {
        double q = prefillTimeShare();
        double landed = 0;
        for (int n = 1; n < server.maxNumSeqs(); n++) {
            landed += stateProbabilities[n] * (q * server.prefillIterationSeconds() + (1 - q) * server.decodeIterationSeconds(n));
        }
        return landed;
    }

    /**
     * The share of the engine's busy time spent in iterations that prefill a prompt: every arrival's prompt takes one
     * iteration of tau_pf, lambda tau_pf of all time, over the busy share 1 - p_0; at most 1, as prompts arriving
     * together share an iteration. Those iterations are the long ones, so arrivals land in them more often than their
     * count suggests, which is what puts the light-load TTFT tail above one decode iteration.
     */
    private double prefillTimeShare() {
        double busy = 1 - stateProbabilities[0];
        return busy <= 0 ? 0 : Math.min(1, arrivalRatePerS * server.prefillIterationSeconds() / busy);
    }

    /**
     * Mean prefill time of the other prompts that share an arrival's prefill iteration: those that arrived during the
     * iteration it landed in, Poisson with mean lambda times that iteration's length, each costing a mean prompt's
     * prefill, P betaPrefill. Arrivals that find the engine idle start an iteration at once, and those that queue for a
     * slot are admitted one departure at a time, so neither shares.
     */
    public double meanSharedPrefillSeconds() {
        return meanLandedIterationSeconds() * arrivalRatePerS * promptPrefillSeconds();
    }

    /**
     * Mean time to first token: the chain's admission wait, the wait for an iteration boundary, the caller's prefill
     * iteration time, and the prompts that share it.
     */
    public double meanTtftSeconds() {
        return meanQueueingDelaySeconds() + meanIterationBoundaryWaitSeconds() + server.prefillIterationSeconds()
                + meanSharedPrefillSeconds();
    }

    /**
     * P(TTFT <= t). An arrival that finds the engine idle takes the prefill iteration tau_pf alone. One that finds n in
     * 1..B-1 running lands uniformly in a prefill iteration of tau_pf (probability q) or a decode iteration of
     * tau_dec(n), waits for its end, then shares its own prefill iteration with the K ~ Poisson(lambda tau) prompts
     * that arrived in the same one, each adding P betaPrefill. One that finds the batch full waits for a departure,
     * P(N >= B)(1 - e^{-(mu_B - lambda) t}) in all. Its mean is {@link #meanTtftSeconds()}.
     */
    public double probabilityTtftAtMost(double tSeconds) {
        Checks.nonNegative("tSeconds", tSeconds);
        double t = tSeconds - server.prefillIterationSeconds();
        if (t < 0) {
            return 0;
        }
        double q = prefillTimeShare();
        double landedInPrefill = landedAndShared(t, server.prefillIterationSeconds());
        double p = stateProbabilities[0];
        for (int n = 1; n < server.maxNumSeqs(); n++) {
            p += stateProbabilities[n] * (q * landedInPrefill + (1 - q) * landedAndShared(t, server.decodeIterationSeconds(n)));
        }
        return p + probabilityOfWait() - probabilityQueueingDelayExceeds(t);
    }

    /** P(U tau + K c <= t) for U uniform on (0, 1), K ~ Poisson(lambda tau) and c a prompt's prefill time. */
    private double landedAndShared(double t, double iterationSeconds) {
        double c = promptPrefillSeconds();
        if (c <= 0) {
            return landed(t, iterationSeconds);
        }
        double mean = arrivalRatePerS * iterationSeconds;
        double poisson = Math.exp(-mean);
        double p = 0;
        for (int k = 0; k * c <= t && !(k > mean && poisson < 1e-18); k++) {
            p += poisson * landed(t - k * c, iterationSeconds);
            poisson *= mean / (k + 1);
        }
        return p;
    }

    /** P(U tau <= t): the wait for the end of an iteration of tau landed in uniformly. */
    private static double landed(double t, double iterationSeconds) {
        return iterationSeconds <= 0 ? 1 : Math.min(1, t / iterationSeconds);
    }

    /** P betaPrefill: the prefill time a mean prompt adds to the iteration that carries it. */
    private double promptPrefillSeconds() {
        return server.meanPromptTokens() * server.iterationTime().betaPrefillSecondsPerToken();
    }

    /**
     * The p-quantile of the time to first token, solving {@link #probabilityTtftAtMost} = p. Even at light load its
     * tail is an iteration and a shared prefill above its median, where the admission wait alone is zero.
     */
    public double ttftPercentileSeconds(double p) {
        Checks.openUnitInterval("percentile", p);
        double prefill = server.prefillIterationSeconds();
        if (p <= stateProbabilities[0]) {
            return prefill;
        }
        double upper = prefill + Math.max(Math.max(prefill, queueingDelayPercentileSeconds(p)), 1e-3);
        for (int i = 0; i < 64 && probabilityTtftAtMost(upper) < p; i++) {
            upper *= 2;
        }
        return new BrentSolver(1e-12, 1e-9).solve(500, t -> probabilityTtftAtMost(t) - p, prefill, upper);
    }

    /** lambda E[L]: output tokens per second carried (all arrivals are served in a stable chain). */
    public double outputTokensPerS() {
        return arrivalRatePerS * server.meanOutputTokens();
    }

    private double meanBelowMaxBatch() {
        double mean = 0;
        for (int n = 1; n < server.maxNumSeqs(); n++) {
            mean += n * stateProbabilities[n];
        }
        return mean;
    }

    private double waitDecayRatePerS() {
        return server.saturationRatePerS() - arrivalRatePerS;
    }
}
