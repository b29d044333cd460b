package dev.infersim.queueing;

import org.apache.commons.math3.analysis.UnivariateFunction;
import org.apache.commons.math3.analysis.solvers.BrentSolver;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The stationary birth-death chain of continuous batching as limited, state-dependent
 * processor sharing. With n requests in the system b = min(n, B) run; requests arrive at rate
 * lambda and complete at rate mu_n = b / (E[L] tau(b)) (see {@link BatchingServer}), so
 * p_n = p_0 prod_{k=1..n} lambda / mu_k. Below B this is generalized processor sharing, whose
 * state distribution is insensitive to the distribution of L (Cohen 1979); the admission wait
 * above B is exact for geometric L and an approximation otherwise (below).
 *
 * <p>Above B the rate is constant, so the tail is geometric with ratio r = lambda / mu_B and is
 * summed in closed form; the states up to B are weighted in log space so large batches cannot
 * overflow. An arrival that finds n >= B waits for n - B + 1 departures, each Exp(mu_B): a
 * geometric mixture of Erlang stages, so P(Wq > t) = P(N >= B) e^{-(mu_B - lambda) t}, the Erlang C
 * shape. The wait is scaled by (ca^2 + cs^2) / 2, as Allen and Cunneen scale M/M/c, for ca^2 and cs^2 the squared
 * coefficients of variation of the arrivals' gaps and of the service (at B a request's service is L iterations, so
 * that of the output lengths; 1, memoryless, unless the caller gives it): fixed lengths wait half as long as geometric
 * ones, as M/D/c against M/M/c. For non-Poisson arrivals the
 * prompts that arrive during an iteration are counted for the gamma gaps ({@link ArrivalCounts}): clumps for bursty
 * arrivals, about one per gap for smooth ones. The completion rate below B is divided by how much longer the mean gap
 * between tokens is with those counts than with Poisson ones at the same rate (clumped prefills cost more once an
 * iteration turns compute-bound), so bursty arrivals run larger batches.
 *
 * <p>An engine admits requests between iterations only. An arrival that finds n in 1..B-1 running
 * lands in an iteration, which carries K prompts (tau_K(n); K = 0 only decodes), waits for its end, then
 * shares its own prefill with the J prompts that arrived during the iteration it landed in (Poisson(lambda
 * tau_K) for Poisson arrivals). Iterations are landed in as often as arrivals fall in them: by length for Poisson
 * arrivals, and for bursty ones more often after a full iteration (the clump before). An arrival to an idle engine
 * starts at once.
 *
 * <p>The engine prefills the prompts of an iteration all at once and slows every running request together, where the
 * chain's rates spread that work over the batch; the chain's weights below B are tempered so its batch has the
 * variance the engine's feedback gives ({@link BatchDispersion}).
 *
 * <p>Sources: J. W. Cohen, "The multiple phase service network with generalized processor
 * sharing", Acta Informatica 12, 1979; Kleinrock 1975, Vol. 1, ch. 3 (birth-death chains);
 * Li, Dai and Peng, arXiv 2504.07347 (stability lambda E[L] &lt; B / tau(B)); A. O. Allen,
 * Probability, Statistics, and Queueing Theory (2nd ed., 1990).
 */
public final class ContinuousBatchingModel implements LatencyModel {

    /** The number of bins of the tabulated TTFT distribution below the admission wait's exponential tail. */
    private static final int TTFT_BINS = 8192;
    /** Atoms of the length and pace distributions the E2EL sums over: enough for percentiles, cheap to sum. */
    private static final int E2EL_ATOMS = 48;
    /** States less likely than this are left out of the per-request TPOT. */
    private static final double MIN_STATE_WEIGHT = 1e-12;
    /** Ranks of an arrival among the prompts prefilled in turn with it that the TTFT follows one by one; beyond, bins. */
    private static final int POSITION_PIECES = 8;
    /** Most episodes after a first token followed one by one before the stationary pace is taken for the rest. */
    private static final int MAX_TRACKED_EPISODES = 64;
    /** Bounds kappa of {@link #dispersionExponent} to [1/16, 16]: a loop that barely settles spreads the batch, not flattens it. */
    private static final double MIN_DISPERSION_EXPONENT = 1.0 / 16;

    /** Keeps the admission wait's decay rate finite when neither the arrivals nor the lengths vary (D/D/c waits not at all). */
    private static final double MIN_WAIT_SCALE = 1e-6;

    private final BatchingServer server;
    private final IterationTimes times;
    private final double arrivalRatePerS;
    private final double waitScale;
    private final double arrivalScv;
    private final ArrivalCounts arrivals;
    private final double dispersionExponent;
    /** [n][k]: the prompts co-admitted with an arrival that finds n running in an iteration of k; built on use. */
    private final double[][][] coAdmitted;
    /** p_0 .. p_B; states above B have p_B r^{n-B}. */
    private final double[] stateProbabilities;
    private final double tailRatio;
    /**
     * sigma, the ratio of the geometric tail above B: lambda / mu_B for Poisson arrivals, for gamma gaps the root of
     * sigma = A*(mu_B (1 - sigma)) of GI/M/1, which the queue above B is (its departures come at mu_B).
     */
    private final double queueRatio;
    /** Per state, the stationary count of prompts an iteration carries, and its transition K -> K'; built on first use. */
    private final double[][] promptsPerIteration;
    private final double[][][] transitions;
    /** [boundary wait, own prefill, shared prefill] means; built on first use. */
    private double[] ttftParts;
    /** P(TTFT <= i h, no admission wait) on a grid of step h; built on first use. */
    private double[] ttftGrid;
    private double ttftGridStep;
    private DiscreteDistribution paceForE2el;
    /** Per request TPOT, and the mean time of a request's tokens after its first; built on first use. */
    private DiscreteDistribution tpot;
    private double meanDecodeSeconds;

    ContinuousBatchingModel(BatchingServer server, double arrivalRatePerS, double arrivalScv, double serviceScv) {
        this.server = server;
        this.times = server.iterationTimes();
        this.arrivalRatePerS = Checks.positive("arrivalRatePerS", arrivalRatePerS);
        this.waitScale = Math.max(MIN_WAIT_SCALE, (Checks.nonNegative("arrivalScv", arrivalScv)
                + Checks.nonNegative("serviceScv", serviceScv)) / (arrivalScv + 1));
        this.arrivalScv = arrivalScv;
        this.arrivals = new ArrivalCounts(arrivalRatePerS, arrivalScv);
        double saturation = server.saturationRatePerS();
        if (arrivalRatePerS >= saturation) {
            throw new UnstableQueueException(arrivalRatePerS, saturation, "B/(E[L]*tau(B))");
        }
        this.tailRatio = arrivalRatePerS / saturation;
        this.queueRatio = arrivalScv == 1 ? tailRatio : ArrivalCounts.busyRoot(arrivalRatePerS, arrivalScv, saturation);
        this.promptsPerIteration = new double[server.maxNumSeqs() + 1][];
        this.transitions = new double[server.maxNumSeqs() + 1][][];
        this.coAdmitted = new double[server.maxNumSeqs() + 1][][];
        double[] none = new double[server.maxNumSeqs() + 1];
        Arrays.fill(none, 1);
        double[] poissonStates = solveStationary(none, 1);
        double[] slowdown = arrivalScv == 1 ? none : clumpSlowdown(poissonStates);
        double[] states = arrivalScv == 1 ? poissonStates : solveStationary(slowdown, 1);
        this.dispersionExponent = dispersionExponent(states);
        this.stateProbabilities = solveStationary(slowdown, dispersionExponent);
    }

    /**
     * kappa: the chain's weights below B are raised to it, which divides the variance of the batch by kappa; below 1
     * where the engine's at-once prefill disperses the batch more than the chain's birth-death rates say.
     */
    public double dispersionExponent() {
        return dispersionExponent;
    }

    /**
     * kappa, the variance of the batch by {@link BatchDispersion} as the chain sees the engine over that as the engine
     * runs: raising the chain's weights below B to the power kappa keeps its mode and divides its variance by kappa.
     * The chain spreads a prompt's prefill over the batch as a share of the mean iteration (its iteration grows with n,
     * the arrivals' own spread left out); the engine prefills the prompts that arrived during an iteration all at once
     * in the next, slowing every running request together, which disperses the batch more the larger the share of time
     * prefill takes. Both sides use the same linear-noise approximation, so its own error cancels.
     */
    private double dispersionExponent(double[] states) {
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

    /** p_n with the completion rate below B divided by slowdown[n] (1 for Poisson arrivals), the weights below B raised to kappa. */
    private double[] solveStationary(double[] slowdown, double kappa) {
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

    public BatchingServer server() {
        return server;
    }

    @Override
    public double arrivalRatePerS() {
        return arrivalRatePerS;
    }

    /** lambda / lambda_max: the load relative to saturation (the Erlang utilization when tau is constant). */
    @Override
    public double utilization() {
        return tailRatio;
    }

    /** sigma, the ratio of the geometric tail above B (lambda / lambda_max for Poisson arrivals). */
    public double queueRatio() {
        return queueRatio;
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
        return stateProbabilities[maxBatch] * Math.pow(queueRatio, requestsInSystem - maxBatch);
    }

    /**
     * The probability that an arrival finds the batch full and queues: P(N >= B) = p_B / (1 - sigma) in time, which an
     * arrival sees sigma / rho times as often (GI/M/1 above B: what arrivals see there is sigma / rho times the time
     * average, so bursty arrivals, which come when others just came, find the batch full more often; Poisson ones see
     * the time average).
     */
    @Override
    public double probabilityOfWait() {
        return timeAtLimit() * queueRatio / tailRatio;
    }

    /** P(N >= B) in time: the share of time the batch is full. */
    private double timeAtLimit() {
        return stateProbabilities[server.maxNumSeqs()] / (1 - queueRatio);
    }

    /** How much likelier an arrival is than a random moment to find each state below B, so that all it finds sums to 1. */
    private double belowLimitScale() {
        return (1 - probabilityOfWait()) / (1 - timeAtLimit());
    }

    /** E[min(N, B)]: the mean number of running requests. */
    @Override
    public double meanBatchSize() {
        double mean = 0;
        for (int n = 1; n < server.maxNumSeqs(); n++) {
            mean += n * stateProbabilities[n];
        }
        return mean + server.maxNumSeqs() * timeAtLimit();
    }

    /** E[N], running plus waiting. */
    @Override
    public double meanNumberInSystem() {
        return meanBatchSize() + meanNumberWaiting();
    }

    /** E[(N - B)^+] = p_B sigma / (1 - sigma)^2. */
    @Override
    public double meanNumberWaiting() {
        double r = queueRatio;
        return stateProbabilities[server.maxNumSeqs()] * r / ((1 - r) * (1 - r));
    }

    /**
     * Mean admission wait, P(an arrival waits) / (mu_B (1 - sigma)), for lengths other than geometric scaled by Kingman's
     * ratio (ca^2 + cs^2) / (ca^2 + 1), as for one request at a time: exact for M/M/c and GI/M/c above B.
     */
    @Override
    public double meanQueueingDelaySeconds() {
        return probabilityOfWait() / waitDecayRatePerS();
    }

    /** P(Wq > t) = P(an arrival waits) e^{-mu_B (1 - sigma) t}, the decay scaled alike. */
    public double probabilityQueueingDelayExceeds(double tSeconds) {
        return ExponentialTail.exceedance(probabilityOfWait(), waitDecayRatePerS(), tSeconds);
    }

    /** The p-quantile of the admission wait: max(0, ln(P(wait) / (1 - p)) / (mu_B (1 - sigma))), scaled alike. */
    @Override
    public double queueingDelayPercentileSeconds(double p) {
        return ExponentialTail.percentileSeconds(probabilityOfWait(), waitDecayRatePerS(), p);
    }

    /** Receives the pieces of the TTFT distribution of arrivals that find a free slot. */
    private interface PieceSink {
        /**
         * TTFT uniform on [start, start + width] with this probability: width is the iteration landed in (its half is
         * the mean boundary wait), start the arrival's prefill with its co-admitted prompts, {@code own} that prefill
         * alone.
         */
        void piece(double probability, double start, double width, double own);
    }

    /**
     * Walks the TTFT of every arrival that finds n in 0..B-1 running. At n = 0 it starts at once: its prefill alone.
     * Otherwise it lands in an iteration that carries K prompts ({@link #promptsPerIteration}), of length tau_K(n),
     * chosen as often as arrivals fall in it ({@link #landedIterations}; by its length for Poisson arrivals),
     * waits U tau_K for it to end, then is prefilled with the J prompts that arrived during it ({@link #coAdmitted}):
     * TTFT = U tau_K + prefill(n, 1 + J), uniform on [prefill(n, 1 + J), prefill(n, 1 + J) + tau_K]. Where chunked
     * prefill takes those prompts in turn, its first token comes when its own turn ends: it is equally likely to be
     * any of the 1 + J (those that arrived before it go first), {@link IterationTimes#firstTokenSeconds}.
     */
    private void walkTtftPieces(PieceSink sink) {
        double alone = times.prefillSeconds(0, 1);
        double seen = belowLimitScale();
        sink.piece(seen * stateProbabilities[0], alone, 0, alone);
        for (int n = 1; n < server.maxNumSeqs(); n++) {
            double p = seen * stateProbabilities[n];
            if (p < 1e-15) {
                continue;
            }
            double own = times.prefillSeconds(n, 1);
            double[] weights = landedIterations(n);
            for (int k = 0; k < weights.length; k++) {
                double landed = p * weights[k];
                if (landed < 1e-15) {
                    continue;
                }
                double[] others = coAdmitted(n, k);
                double length = iterationWithPrompts(n, k);
                for (int j = 0; j < others.length; j++) {
                    double mass = landed * others[j];
                    if (mass < 1e-15) {
                        continue;
                    }
                    double together = times.prefillSeconds(n, 1 + j);
                    if (j == 0 || times.firstTokenSeconds(n, 1 + j, 0) == together) {
                        sink.piece(mass, together, length, own);
                        continue;
                    }
                    // its rank among the 1 + J, uniform: every rank up to POSITION_PIECES of them, else equal bins' midpoints
                    int pieces = Math.min(j + 1, POSITION_PIECES);
                    for (int i = 0; i < pieces; i++) {
                        int position = (int) ((i + 0.5) * (j + 1) / pieces);
                        sink.piece(mass / pieces, times.firstTokenSeconds(n, 1 + j, position), length, own);
                    }
                }
            }
        }
    }

    /**
     * The iteration an arrival that finds n running lands in, as the law of the K prompts it carries: an iteration is
     * landed in as often as arrivals fall in it, P(K = k) E[arrivals in it | K = k]. For Poisson arrivals that is its
     * length, lambda tau_K(n). Renewal arrivals remember: K counts the arrivals of the iteration before, and clumped
     * ones follow a full window with more, smooth ones with fewer. The conditional mean is taken by linear regression
     * on the counts of two adjacent windows of the equilibrium process, Cov(A1, A2) = (V(t1 + t2) - V(t1) - V(t2)) / 2
     * for V(t) the variance of the count in a window of t ({@link ArrivalCounts#countVariance}), t1 the mean iteration.
     */
    private double[] landedIterations(int n) {
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
    private double iterationWithPrompts(int n, int prompts) {
        return prompts == 0 ? times.decodeSeconds(n) : times.prefillSeconds(n, prompts);
    }

    /** m_K(n): the iterations that episode spans, each a token for the n decoding. */
    private double iterationsWithPrompts(int n, int prompts) {
        return prompts == 0 ? 1 : times.prefillIterations(n, prompts);
    }

    /**
     * The stationary distribution of K, the prompts an iteration carries with n running: those that arrived during the
     * previous one, K' = the arrivals in tau_K(n) (Poisson(lambda tau_K(n)) for Poisson arrivals). A long iteration lets
     * many prompts arrive, which makes the next one long, so K is more dispersed than the count in a mean iteration:
     * runs of long iterations. Solved by power iteration from that count.
     */
    private double[] promptsPerIteration(int n) {
        if (promptsPerIteration[n] == null) {
            transitions[n] = transition(n, arrivals);
            promptsPerIteration[n] = stationary(n, transitions[n], arrivals);
        }
        return promptsPerIteration[n];
    }

    /** P(K' = j | K = k): the prompts arriving during an iteration of n decodes and k prompts. */
    private double[][] transition(int n, ArrivalCounts counts) {
        int kMax = Math.min(256, 2 * countLimit(arrivalRatePerS * times.meanSeconds(n)));
        double[][] transition = new double[kMax + 1][kMax + 1];
        for (int k = 0; k <= kMax; k++) {
            counts.fromRandomTimeInto(iterationWithPrompts(n, k), transition[k]);
        }
        return transition;
    }

    /** The stationary law of the transition, by power iteration from the count in a mean iteration. */
    private double[] stationary(int n, double[][] transition, ArrivalCounts counts) {
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
    private double meanGapSeconds(int n, double[] prompts) {
        double seconds = 0;
        double tokens = 0;
        for (int k = 0; k < prompts.length; k++) {
            seconds += prompts[k] * iterationWithPrompts(n, k);
            tokens += prompts[k] * iterationsWithPrompts(n, k);
        }
        return seconds / tokens;
    }

    /**
     * How much longer the iterations with n running are under these arrivals than under Poisson ones at the same rate:
     * the stationary mean gap with the arrivals' own counts over that with Poisson counts. Bursty arrivals bring their
     * prompts in clumps, whose prefill costs more than the same prompts spread out once an iteration turns
     * compute-bound. Evaluated at up to 33 batch sizes across the states the Poisson chain visits, linear in between.
     */
    private double[] clumpSlowdown(double[] poissonStates) {
        int maxBatch = server.maxNumSeqs();
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
            double poissonGap = meanGapSeconds(n, stationary(n, transition(n, poisson), poisson));
            slowdown[n] = Math.max(1e-3, meanGapSeconds(n, promptsPerIteration(n)) / poissonGap);
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

    /** A count past which the arrivals in a window holding {@code mean} of them on average have negligible mass. */
    private int countLimit(double mean) {
        double spread = Math.max(1, arrivalScv) * mean;
        return (int) Math.min(256, Math.ceil(mean + 10 * Math.sqrt(spread) + 10));
    }

    /**
     * The distribution of J, the other prompts that arrive during the iteration with K = k prompts an arrival finding n
     * running lands in: all of them are admitted with it. Poisson(lambda tau_K(n)) for Poisson arrivals; clumped for
     * bursty gaps, nearly none for smooth ones ({@link ArrivalCounts#aroundArrivalInto}).
     */
    private double[] coAdmitted(int n, int k) {
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

    /** [boundary wait, own prefill, shared prefill], each a mean over all arrivals (queued ones: prefill at B - 1). */
    private double[] ttftParts() {
        if (ttftParts == null) {
            double[] parts = new double[3];
            walkTtftPieces((probability, start, width, own) -> {
                parts[0] += probability * width / 2;
                parts[1] += probability * own;
                parts[2] += probability * (start - own);
            });
            parts[1] += probabilityOfWait() * times.prefillSeconds(server.maxNumSeqs() - 1, 1);
            ttftParts = parts;
        }
        return ttftParts;
    }


    /** Mean wait of an arrival for the iteration it lands in to end: half its (length-biased) length. */
    public double meanIterationBoundaryWaitSeconds() {
        return ttftParts()[0];
    }

    /** Mean length of an arrival's own prefill as if it were alone in it, at the batch it finds (B - 1 if it queued). */
    public double meanPrefillIterationSeconds() {
        return ttftParts()[1];
    }

    /** Mean time the prompts admitted with an arrival add to its prefill: those that arrived during the iteration it landed in. */
    public double meanSharedPrefillSeconds() {
        return ttftParts()[2];
    }

    /** Mean time to first token: admission wait, iteration boundary, own prefill and the prompts sharing it. */
    @Override
    public double meanTtftSeconds() {
        double[] parts = ttftParts();
        return meanQueueingDelaySeconds() + parts[0] + parts[1] + parts[2];
    }

    /**
     * P(TTFT <= t): the pieces of {@link #walkTtftPieces} summed on a fine grid, plus the arrivals that queue, whose
     * TTFT is the admission wait (exponential tail) and the prefill at B - 1.
     */
    public double probabilityTtftAtMost(double tSeconds) {
        Checks.nonNegative("tSeconds", tSeconds);
        double[] grid = ttftGrid();
        double x = tSeconds / ttftGridStep;
        double p;
        if (x >= grid.length - 1) {
            p = grid[grid.length - 1];
        } else {
            int i = (int) x;
            p = grid[i] + (x - i) * (grid[i + 1] - grid[i]);
        }
        double queued = tSeconds - times.prefillSeconds(server.maxNumSeqs() - 1, 1);
        return queued < 0 ? p : p + probabilityOfWait() - probabilityQueueingDelayExceeds(queued);
    }

    private double[] ttftGrid() {
        if (ttftGrid != null) {
            return ttftGrid;
        }
        double[] end = {0};
        walkTtftPieces((probability, start, width, own) -> end[0] = Math.max(end[0], start + width));
        double h = end[0] * 1.0001 / TTFT_BINS;
        // grid[i] = P(TTFT <= i h); bin i covers ((i - 1) h, i h]. Whole bins inside a piece get its mass per bin
        // through a difference array, so each piece costs O(1) however wide it is.
        double[] mass = new double[TTFT_BINS + 3];
        double[] perBinChange = new double[TTFT_BINS + 3];
        walkTtftPieces((probability, start, width, own) -> {
            double from = start / h;
            double to = (start + width) / h;
            int a = (int) from;
            int b = (int) to;
            if (a == b) {
                mass[a + 1] += probability;
                return;
            }
            double perBin = probability / (to - from);
            mass[a + 1] += (a + 1 - from) * perBin;
            mass[b + 1] += (to - b) * perBin;
            perBinChange[a + 2] += perBin;
            perBinChange[b + 1] -= perBin;
        });
        double[] grid = new double[TTFT_BINS + 3];
        double perBin = 0;
        for (int i = 1; i < grid.length; i++) {
            perBin += perBinChange[i];
            grid[i] = grid[i - 1] + mass[i] + perBin;
        }
        ttftGridStep = h;
        ttftGrid = grid;
        return grid;
    }

    /** The p-quantile of the time to first token, solving {@link #probabilityTtftAtMost} = p. */
    @Override
    public double ttftPercentileSeconds(double p) {
        Checks.openUnitInterval("percentile", p);
        return solve(this::probabilityTtftAtMost, p, 0);
    }

    /**
     * The pace of the batch a request runs in, per token after the first, as a distribution over the state it finds on
     * arrival: with n others in the system it runs in batches near b = min(n + 1, B), where an iteration carries the K
     * prompts that arrived during the last one ({@link #promptsPerIteration}) (at the limit B, the B / E[L] that replace
     * finishers: the mean iteration).
     */
    private DiscreteDistribution pace() {
        int maxBatch = server.maxNumSeqs();
        double[] values = new double[maxBatch + 1];
        double[] weights = new double[maxBatch + 1];
        for (int n = 0; n <= maxBatch; n++) {
            weights[n] = stateWeight(n);
            int b = Math.min(n + 1, maxBatch);
            values[n] = weights[n] < 1e-15 ? times.meanSeconds(b) : meanIterationSeenSeconds(b);
        }
        return DiscreteDistribution.ofWeighted(values, weights);
    }

    /**
     * The mean gap between tokens of a request decoding in a batch of b: E[tau_K(b)] / E[m_K(b)] over the stationary
     * count K of prompts an episode carries, m_K the iterations (each a token) it spans.
     */
    private double meanIterationSeenSeconds(int b) {
        if (b == server.maxNumSeqs()) {
            return times.meanSeconds(b);
        }
        return meanGapSeconds(b, promptsPerIteration(b));
    }

    /** P(an arrival finds n), the states at and above B lumped into n = B. */
    private double stateWeight(int n) {
        return n < server.maxNumSeqs() ? belowLimitScale() * stateProbabilities[n] : probabilityOfWait();
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
            atoms += stateWeight(n) >= MIN_STATE_WEIGHT ? 1 : 0;
        }
        double[] values = new double[atoms * lengths.size()];
        double[] weights = new double[values.length];
        double decode = 0;
        double total = 0;
        int a = 0;
        for (int n = 0; n <= maxBatch; n++) {
            double w = stateWeight(n);
            if (w < MIN_STATE_WEIGHT) {
                continue;
            }
            total += w;
            int b = Math.min(n + 1, maxBatch);
            double[][] episodes = b == maxBatch ? new double[][] {{0, 1}, {0, times.meanSeconds(b)}} : episodesAfterFirstToken(n, b);
            for (int j = 0; j < lengths.size(); j++) {
                double later = lengths.value(j) - 1;
                double seconds = decodeSeconds(episodes, later);
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
        double[] stationary = promptsPerIteration(b);
        int kMax = stationary.length - 1;
        double[] lengths = new double[kMax + 1];
        double[] iterations = new double[kMax + 1];
        double[][] transition = transitions[b];
        for (int k = 0; k <= kMax; k++) {
            lengths[k] = iterationWithPrompts(b, k);
            iterations[k] = iterationsWithPrompts(b, k);
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
     * ({@link #coAdmitted}), K the count in the iteration it landed in (length-biased, as in {@link #walkTtftPieces});
     * at n = 0 it is prefilled alone, and the window starts at its arrival.
     */
    private double[] promptsAfterOwnPrefill(int n, int kMax) {
        double[] mixed = new double[kMax + 1];
        double[] during = new double[kMax + 1];
        if (n == 0) {
            arrivals.afterArrivalInto(times.prefillSeconds(0, 1), mixed);
            return mixed;
        }
        double[] landed = landedIterations(n);
        double[] coAdmittedMix = new double[0];
        for (int k = 0; k < landed.length; k++) {
            double weight = landed[k];
            if (weight < 1e-12) {
                continue;
            }
            double[] others = coAdmitted(n, k);
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
            arrivals.fromRandomTimeInto(times.prefillSeconds(n, 1 + j), during);
            for (int m = 0; m <= kMax; m++) {
                mixed[m] += coAdmittedMix[j] * during[m];
            }
        }
        return mixed;
    }

    private DiscreteDistribution tpot() {
        if (tpot == null) {
            buildTpot();
        }
        return tpot;
    }

    @Override
    public double meanTpotSeconds() {
        return tpot().mean();
    }

    @Override
    public double tpotPercentileSeconds(double p) {
        return tpot().quantile(p);
    }

    /**
     * The gaps between tokens, token-weighted: in a batch of b (probability pi_b, b tokens an iteration) a gap is one of
     * the m_K(b) iterations of an episode carrying K prompts ({@link #promptsPerIteration}), tau_K(b) / m_K(b) on average.
     */
    private DiscreteDistribution itl() {
        int maxBatch = server.maxNumSeqs();
        List<double[]> atoms = new ArrayList<>();
        for (int b = 1; b <= maxBatch; b++) {
            double pi = (b < maxBatch ? stateProbabilities[b] : timeAtLimit()) * b;
            if (pi < 1e-15) {
                continue;
            }
            double[] prompts = promptsPerIteration(b);
            for (int k = 0; k < prompts.length; k++) {
                double iterations = iterationsWithPrompts(b, k);
                atoms.add(new double[] {iterationWithPrompts(b, k) / iterations, pi * prompts[k] * iterations});
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

    @Override
    public double meanItlSeconds() {
        return itl().mean();
    }

    @Override
    public double itlPercentileSeconds(double p) {
        return itl().quantile(p);
    }

    /** TTFT plus the mean time of the L - 1 later tokens (not (E[L] - 1) E[TPOT]: TPOT is a per-request ratio). */
    @Override
    public double meanE2elSeconds() {
        tpot();
        return meanTtftSeconds() + meanDecodeSeconds;
    }

    /**
     * P(E2EL <= t) = sum over L and the request's TPOT v of P(L) P(v) P(TTFT <= t - (L - 1) v): the TTFT, the length and
     * the pace of the batch the request runs in taken as independent.
     */
    public double probabilityE2elAtMost(double tSeconds) {
        DiscreteDistribution lengths = server.outputTokens().condensed(E2EL_ATOMS);
        DiscreteDistribution paces = paceForE2el();
        double p = 0;
        for (int i = 0; i < lengths.size(); i++) {
            for (int j = 0; j < paces.size(); j++) {
                double rest = tSeconds - (lengths.value(i) - 1) * paces.value(j);
                if (rest > 0) {
                    p += lengths.probability(i) * paces.probability(j) * probabilityTtftAtMost(rest);
                }
            }
        }
        return p;
    }


    private DiscreteDistribution paceForE2el() {
        if (paceForE2el == null) {
            paceForE2el = pace().condensed(E2EL_ATOMS);
        }
        return paceForE2el;
    }

    @Override
    public double e2elPercentileSeconds(double p) {
        Checks.openUnitInterval("percentile", p);
        return solve(this::probabilityE2elAtMost, p, 0);
    }

    /** Mean time in the system, E[N] / lambda by Little's law. */
    public double meanSojournSeconds() {
        return LittlesLaw.meanTimeSeconds(meanNumberInSystem(), arrivalRatePerS);
    }

    /** lambda E[L]: output tokens per second carried (all arrivals are served in a stable chain). */
    public double outputTokensPerS() {
        return arrivalRatePerS * server.meanOutputTokens();
    }

    private double waitDecayRatePerS() {
        return server.saturationRatePerS() * (1 - queueRatio) / waitScale;
    }

    /** The t where a distribution function reaches p, bracketed from {@code lower} by doubling. */
    static double solve(UnivariateFunction cdf, double p, double lower) {
        if (cdf.value(lower) >= p) {
            return lower;
        }
        double upper = 2 * lower + 1e-3;
        for (int i = 0; i < 64 && cdf.value(upper) < p; i++) {
            upper *= 2;
        }
        return new BrentSolver(1e-12, 1e-9).solve(500, t -> cdf.value(t) - p, lower, upper);
    }
}
