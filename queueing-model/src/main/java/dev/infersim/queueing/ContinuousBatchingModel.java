package dev.infersim.queueing;

import org.apache.commons.math3.analysis.UnivariateFunction;
import org.apache.commons.math3.analysis.solvers.BrentSolver;

import java.util.Arrays;

/**
 * The continuous-batching chain: the stationary birth-death chain of continuous batching as limited, state-dependent
 * processor sharing, with the engine's iteration-level admission on top. With n requests in the system b = min(n, B)
 * run; requests arrive at rate lambda and complete at rate mu_n = b / (E[L] tau(b)) ({@link BatchingServer}), so
 * p_n = p_0 prod_{k=1..n} lambda / mu_k. Below B this is generalized processor sharing, whose state distribution is
 * insensitive to the distribution of L (Cohen 1979); above B departures come at mu_B, so the queue there is GI/M/1,
 * whose tail ratio sigma is lambda / mu_B for Poisson arrivals and the root of sigma = A*(mu_B (1 - sigma)) for gamma
 * gaps. The admission wait is that queue's, exact for geometric L; for other lengths it is scaled by Kingman's ratio
 * (ca^2 + cs^2) / (ca^2 + 1) (not Allen and Cunneen's (ca^2 + cs^2) / 2: sigma already carries the arrivals' variation),
 * so fixed lengths with Poisson arrivals wait half as long as geometric ones, as M/D/c against M/M/c.
 *
 * <p>The parts, each in its own class (docs/queueing-chain.md says which are exact, approximate or fitted, and which
 * test holds each): the chain and its admission wait ({@link StationaryBatchChain}); the prompts each iteration
 * carries, the iteration an arrival lands in and the prompts admitted with it ({@link IterationEpisodes}); the two
 * corrections of the chain's weights below B, the clump slowdown of bursty arrivals and the dispersion exponent of the
 * engine's at-once prefill ({@link ChainCorrections}); the time to first token ({@link FirstTokenTime}); and the decode
 * pace, TPOT and ITL ({@link DecodePace}). This class builds them in that order and answers as a {@link LatencyModel};
 * E2EL combines the first token and the pace.
 *
 * <p>Sources: J. W. Cohen, "The multiple phase service network with generalized processor
 * sharing", Acta Informatica 12, 1979; Kleinrock 1975, Vol. 1, ch. 3 (birth-death chains);
 * Li, Dai and Peng, arXiv 2504.07347 (stability lambda E[L] &lt; B / tau(B)); A. O. Allen,
 * Probability, Statistics, and Queueing Theory (2nd ed., 1990).
 */
public final class ContinuousBatchingModel implements LatencyModel {

    /** Keeps the admission wait's decay rate finite when neither the arrivals nor the lengths vary (D/D/c waits not at all). */
    private static final double MIN_WAIT_SCALE = 1e-6;

    private final BatchingServer server;
    private final double arrivalRatePerS;
    private final double dispersionExponent;
    private final StationaryBatchChain chain;
    private final FirstTokenTime firstToken;
    private final DecodePace pace;

    /** The stationary chain of {@code server} at Poisson arrival rate lambda; throws if lambda reaches saturation. */
    public static ContinuousBatchingModel of(BatchingServer server, double arrivalRatePerS) {
        return of(server, arrivalRatePerS, 1);
    }

    /**
     * The chain at rate lambda for arrivals whose gaps have squared coefficient of variation ca^2 (1 for Poisson;
     * 1 / burstiness for vLLM's gamma arrivals): the admission wait is scaled as Allen-Cunneen scales M/M/c.
     */
    public static ContinuousBatchingModel of(BatchingServer server, double arrivalRatePerS, double arrivalScv) {
        return of(server, arrivalRatePerS, arrivalScv, 1);
    }

    /**
     * The chain whose admission wait is scaled by Kingman's (ca^2 + cs^2) / (ca^2 + 1) for cs^2 the squared coefficient
     * of variation of a request's service at B, L iterations: that of the output lengths (0 for fixed lengths, which with
     * Poisson arrivals wait half as long, as M/D/c against M/M/c). The shorter forms take cs^2 = 1, lengths as memoryless
     * as the chain's completions.
     */
    public static ContinuousBatchingModel of(BatchingServer server, double arrivalRatePerS, double arrivalScv,
                                             double serviceScv) {
        return new ContinuousBatchingModel(server, arrivalRatePerS, arrivalScv, serviceScv);
    }

    private ContinuousBatchingModel(BatchingServer server, double arrivalRatePerS, double arrivalScv, double serviceScv) {
        this.server = server;
        this.arrivalRatePerS = Checks.positive("arrivalRatePerS", arrivalRatePerS);
        double waitScale = Math.max(MIN_WAIT_SCALE, (Checks.nonNegative("arrivalScv", arrivalScv)
                + Checks.nonNegative("serviceScv", serviceScv)) / (arrivalScv + 1));
        ArrivalCounts arrivals = new ArrivalCounts(arrivalRatePerS, arrivalScv);
        double saturation = server.saturationRatePerS();
        if (arrivalRatePerS >= saturation) {
            throw new UnstableQueueException(arrivalRatePerS, saturation, "B/(E[L]*tau(B))");
        }
        double tailRatio = arrivalRatePerS / saturation;
        double queueRatio = arrivalScv == 1 ? tailRatio : ArrivalCounts.busyRoot(arrivalRatePerS, arrivalScv, saturation);
        int maxBatch = server.maxNumSeqs();
        IterationEpisodes episodes = new IterationEpisodes(server.iterationTimes(), maxBatch, arrivalRatePerS, arrivalScv,
                arrivals);
        double[] none = new double[maxBatch + 1];
        Arrays.fill(none, 1);
        double[] poissonStates = StationaryBatchChain.solve(server, arrivalRatePerS, queueRatio, none, 1);
        double[] slowdown = arrivalScv == 1 ? none
                : ChainCorrections.clumpSlowdown(maxBatch, arrivalRatePerS, episodes, poissonStates);
        double[] states = arrivalScv == 1 ? poissonStates
                : StationaryBatchChain.solve(server, arrivalRatePerS, queueRatio, slowdown, 1);
        this.dispersionExponent = ChainCorrections.dispersionExponent(server, arrivalRatePerS, arrivalScv, queueRatio,
                states);
        this.chain = new StationaryBatchChain(server, tailRatio, queueRatio, waitScale,
                StationaryBatchChain.solve(server, arrivalRatePerS, queueRatio, slowdown, dispersionExponent));
        this.firstToken = new FirstTokenTime(server, chain, episodes);
        this.pace = new DecodePace(server, chain, episodes);
    }

    /**
     * kappa: the chain's weights below B are raised to it, which divides the variance of the batch by kappa; below 1
     * where the engine's at-once prefill disperses the batch more than the chain's birth-death rates say
     * ({@link ChainCorrections#dispersionExponent}).
     */
    public double dispersionExponent() {
        return dispersionExponent;
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
        return chain.tailRatio();
    }

    /** sigma, the ratio of the geometric tail above B (lambda / lambda_max for Poisson arrivals). */
    public double queueRatio() {
        return chain.queueRatio();
    }

    /** P(N = n), the stationary probability of n requests in the system (running plus waiting). */
    public double probabilityOfState(int requestsInSystem) {
        if (requestsInSystem < 0) {
            throw new IllegalArgumentException("requestsInSystem must be >= 0, got " + requestsInSystem);
        }
        return chain.probabilityOfState(requestsInSystem);
    }

    /**
     * The probability that an arrival finds the batch full and queues: P(N >= B) = p_B / (1 - sigma) in time, which an
     * arrival sees sigma / rho times as often (what arrivals see of GI/M/1 above B; Poisson ones see the time average).
     */
    @Override
    public double probabilityOfWait() {
        return chain.probabilityOfWait();
    }

    /** E[min(N, B)]: the mean number of running requests. */
    @Override
    public double meanBatchSize() {
        return chain.meanBatchSize();
    }

    /** E[N], running plus waiting. */
    @Override
    public double meanNumberInSystem() {
        return meanBatchSize() + meanNumberWaiting();
    }

    /** E[(N - B)^+] = p_B sigma / (1 - sigma)^2. */
    @Override
    public double meanNumberWaiting() {
        return chain.meanNumberWaiting();
    }

    /**
     * Mean admission wait, P(an arrival waits) / (mu_B (1 - sigma)), for lengths other than geometric scaled by Kingman's
     * ratio (ca^2 + cs^2) / (ca^2 + 1), as for one request at a time: exact for M/M/c and GI/M/c above B.
     */
    @Override
    public double meanQueueingDelaySeconds() {
        return chain.meanQueueingDelaySeconds();
    }

    /** P(Wq > t) = P(an arrival waits) e^{-mu_B (1 - sigma) t}, the decay scaled alike. */
    public double probabilityQueueingDelayExceeds(double tSeconds) {
        return chain.probabilityQueueingDelayExceeds(tSeconds);
    }

    /** The p-quantile of the admission wait: max(0, ln(P(wait) / (1 - p)) / (mu_B (1 - sigma))), scaled alike. */
    @Override
    public double queueingDelayPercentileSeconds(double p) {
        return chain.queueingDelayPercentileSeconds(p);
    }

    /** Mean wait of an arrival for the iteration it lands in to end: half its (length-biased) length. */
    public double meanIterationBoundaryWaitSeconds() {
        return firstToken.meanIterationBoundaryWaitSeconds();
    }

    /** Mean length of an arrival's own prefill as if it were alone in it, at the batch it finds (B - 1 if it queued). */
    public double meanPrefillIterationSeconds() {
        return firstToken.meanPrefillIterationSeconds();
    }

    /** Mean time the prompts admitted with an arrival add to its prefill: those that arrived during the iteration it landed in. */
    public double meanSharedPrefillSeconds() {
        return firstToken.meanSharedPrefillSeconds();
    }

    /** Mean time to first token: admission wait, iteration boundary, own prefill and the prompts sharing it. */
    @Override
    public double meanTtftSeconds() {
        return firstToken.meanSeconds();
    }

    /** P(TTFT <= t) ({@link FirstTokenTime#probabilityAtMost}). */
    public double probabilityTtftAtMost(double tSeconds) {
        return firstToken.probabilityAtMost(tSeconds);
    }

    /** The p-quantile of the time to first token, solving {@link #probabilityTtftAtMost} = p. */
    @Override
    public double ttftPercentileSeconds(double p) {
        Checks.openUnitInterval("percentile", p);
        return solve(this::probabilityTtftAtMost, p, 0);
    }

    @Override
    public double meanTpotSeconds() {
        return pace.tpot().mean();
    }

    @Override
    public double tpotPercentileSeconds(double p) {
        return pace.tpot().quantile(p);
    }

    @Override
    public double meanItlSeconds() {
        return pace.itl().mean();
    }

    @Override
    public double itlPercentileSeconds(double p) {
        return pace.itl().quantile(p);
    }

    /** TTFT plus the mean time of the L - 1 later tokens (not (E[L] - 1) E[TPOT]: TPOT is a per-request ratio). */
    @Override
    public double meanE2elSeconds() {
        double decode = pace.meanDecodeSeconds();
        return meanTtftSeconds() + decode;
    }

    /**
     * P(E2EL <= t) = sum over L and the request's TPOT v of P(L) P(v) P(TTFT <= t - (L - 1) v): the TTFT, the length and
     * the pace of the batch the request runs in taken as independent.
     */
    public double probabilityE2elAtMost(double tSeconds) {
        DiscreteDistribution lengths = server.outputTokens().condensed(DecodePace.E2EL_ATOMS);
        DiscreteDistribution paces = pace.paceForE2el();
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
