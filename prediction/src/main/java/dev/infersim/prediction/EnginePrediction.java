package dev.infersim.prediction;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.CostModel;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.queueing.BatchingServer;
import dev.infersim.queueing.ContinuousBatchingModel;
import dev.infersim.queueing.ClosedLoopBatchingModel;
import dev.infersim.queueing.DiscreteDistribution;
import dev.infersim.queueing.LatencyModel;
import dev.infersim.queueing.SequentialServiceModel;
import dev.infersim.queueing.TabulatedIterationTimes;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The closed-form models of {@code dev.infersim.queueing} with their parameters derived from a deployment's own cost
 * model, scheduler settings and KV cache, and from a workload's measured lengths. Nothing is fitted: the time of an
 * iteration of n decoding sequences, or of a prompt prefilled beside them, is what the engine's {@link CostModel} says
 * of that batch, so one sequence decodes exactly as fast as {@code profile} reports.
 *
 * <p>With {@code --max-num-seqs 1} the engine serves one request at a time: a G/G/1 queue whose service time is each
 * sampled request's prefill plus its decode steps ({@link SequentialServiceModel}). Otherwise the continuous-batching
 * chain, with tables for n = 0..B of the decode iteration, the prefill of a prompt beside n decodes (chunked to the
 * token budget when chunked prefill is on), and the mean iteration with the prefill of n / E[L] admissions folded in,
 * priced by {@link IterationTables}.
 *
 * <p>Prefix caching: a request whose prefix group was sent before finds that prefix's full blocks cached, unless the
 * cache evicted them; the share kept is what the cache holds beside the running sequences, (M - running tokens) / F
 * for F the tokens of all distinct prefixes. KV capacity: the batch is capped at the sequences M tokens sustain on
 * average, N = (M - kept prefixes - leftover) / (mean context of a running sequence + half a block), the memory-time
 * limit of Nie, Si and Zhou (arXiv 2605.04595), less the leftover the engine cannot fill (below one prompt, half a
 * prompt on average). At that limit the cache frees room only at departures, so admissions come with them, and the
 * engine, admitting whatever fits, outgrows the cache and preempts the newest request, whose recompute rides with the
 * next departure's prompt ({@link IterationTables}).
 */
public final class EnginePrediction {
    /** Most prompt shapes the tables average over; beyond, equal-weight bins. */
    private static final int PROMPT_ATOMS = 48;

    private final Deployment deployment;
    private final WorkloadMoments moments;
    private final KvCapacity kv;
    private final DiscreteDistribution outputTokens;
    private final double decodeContext;
    private final IterationTables tables;
    private final Service full;

    /**
     * The model's parameters at one share of warm prefixes kept in the cache.
     *
     * @param prefixRetention        share of warm requests whose prefix is still cached
     * @param cachedTokensPerRequest mean prompt tokens served from the cache
     * @param footprintTokens        mean KV tokens a running sequence holds of its own
     * @param leftoverTokens         mean KV tokens left free at the limit: below what the next prompt needs
     * @param sustainedSeqs          sequences the KV cache holds decoding on average, (M - kept prefixes - leftover) / footprint
     * @param batchLimit             min(--max-num-seqs, ceil(sustainedSeqs)), or where requests complete fastest at a
     *                               smaller batch ({@code peakBound}), that batch
     * @param recomputeShare         preemptions per request at a KV-bound batch limit; 0 otherwise
     * @param recomputeTokens        tokens recomputed per request at a KV-bound batch limit; 0 otherwise
     * @param batching               the chain's server; null one request at a time
     * @param sequential             one request at a time: service, first-token part, TPOT; else null
     */
    record Service(double prefixRetention, double cachedTokensPerRequest, double footprintTokens, double leftoverTokens,
                   double sustainedSeqs, int batchLimit, boolean peakBound, double recomputeShare,
                   double recomputeTokens, BatchingServer batching, DiscreteDistribution[] sequential) {

        boolean kvBound() {
            return recomputeTokens > 0;
        }
    }

    public EnginePrediction(Deployment deployment, WorkloadMoments moments) {
        this(deployment, new RooflineCostModel(deployment), moments);
    }

    EnginePrediction(Deployment deployment, CostModel cost, WorkloadMoments moments) {
        // its iterations are one forward pass each; a multi-step round's shared host time and end-of-round tokens are
        // the simulator's (MultiStepScheduler)
        ConfigException.check(deployment.numSchedulerSteps() == 1, "--num-scheduler-steps %d: multi-step rounds are "
                + "modelled by simulate, not by predict; predict with 1", deployment.numSchedulerSteps());
        this.deployment = deployment;
        this.moments = moments;
        this.kv = KvCapacity.of(deployment);
        double[] lengths = new double[moments.samples()];
        for (int i = 0; i < lengths.length; i++) {
            lengths[i] = moments.outputTokens(i);
        }
        this.outputTokens = DiscreteDistribution.ofSamples(lengths);
        this.decodeContext = moments.meanDecodeContextTokens();
        // the engine's own step: the GPU's work with its version's host time, as EngineCore prices it
        this.tables = new IterationTables(deployment, deployment.engine().hostTime().over(cost), outputTokens, decodeContext);
        this.full = service(1);
    }

    public WorkloadMoments moments() {
        return moments;
    }

    Deployment deployment() {
        return deployment;
    }

    KvCapacity kv() {
        return kv;
    }

    DiscreteDistribution outputTokens() {
        return outputTokens;
    }

    /** Mean context of a decoding sequence, the one the decode iterations are costed at. */
    double decodeContextTokens() {
        return decodeContext;
    }

    boolean cachesPrefixes() {
        return deployment.enablePrefixCaching() && moments.distinctPrefixTokens() > 0;
    }

    boolean oneAtATime() {
        return deployment.maxNumSeqs() == 1;
    }

    /** The arrival rate at which the queue grows without bound. */
    public double saturationRatePerS() {
        Service s = saturationService();
        return oneAtATime() ? 1 / s.sequential()[0].mean() : s.batching().saturationRatePerS();
    }

    /** The batch the KV cache sustains (at most --max-num-seqs). */
    public int batchLimit() {
        return full.batchLimit();
    }

    /**
     * N clients in a closed loop with no think time ({@link ClosedLoopBatchingModel}), in the steady state, the prefix
     * cache keeping what it holds beside the min(N, B) sequences running. Not for one request at a time.
     */
    public ClosedLoopBatchingModel closedLoop(int clients) {
        return new ClosedLoopBatchingModel(closedLoopServer(clients), clients);
    }

    /** As {@link #closedLoop(int)}, the means over the requests after the first {@code warmups} of {@code requests}. */
    public ClosedLoopBatchingModel closedLoop(int clients, long warmups, long requests) {
        return new ClosedLoopBatchingModel(closedLoopServer(clients), clients, warmups, requests);
    }

    /** The server of a closed loop: its tables wide enough to tell how many of a cohort's prompts an iteration takes. */
    private BatchingServer closedLoopServer(int clients) {
        return service(cachesPrefixes() ? retention(Math.min(clients, full.batchLimit())) : 1, true).batching();
    }

    /** The model at a Poisson rate. Throws {@link dev.infersim.queueing.UnstableQueueException} at or above saturation. */
    public LatencyModel at(double ratePerS) {
        return at(ratePerS, 1);
    }

    /** The model at a rate whose gaps have squared coefficient of variation ca^2 (1 / burstiness for gamma gaps). */
    public LatencyModel at(double ratePerS, double arrivalScv) {
        return model(serviceAt(ratePerS, arrivalScv), ratePerS, arrivalScv);
    }

    private LatencyModel model(Service s, double ratePerS, double arrivalScv) {
        if (oneAtATime()) {
            DiscreteDistribution[] d = s.sequential();
            return new SequentialServiceModel(ratePerS, arrivalScv, d[0], d[1], d[2]);
        }
        return ContinuousBatchingModel.of(s.batching(), ratePerS, arrivalScv, outputTokens.squaredCoefficientOfVariation());
    }

    /** The parameters at this rate: the prefix cache keeps what it holds beside the sequences running at it. */
    Service serviceAt(double ratePerS, double arrivalScv) {
        if (!cachesPrefixes()) {
            return full;
        }
        double running = model(full, ratePerS, arrivalScv).meanBatchSize();
        return service(retention(running));
    }

    private Service saturationService() {
        return cachesPrefixes() ? service(retention(full.batchLimit())) : full;
    }

    /** The share of distinct prefixes the cache keeps beside {@code runningSeqs} sequences' own blocks. */
    private double retention(double runningSeqs) {
        double free = kv.tokens() - runningSeqs * footprintTokens(full.cachedTokensPerRequest());
        return Math.max(0, Math.min(1, free / moments.distinctPrefixTokens()));
    }

    /** Mean KV tokens a running sequence holds of its own: its length-biased context less its cached prefix, plus half a block. */
    private double footprintTokens(double cachedTokens) {
        return decodeContext - cachedTokens + deployment.blockSize() / 2.0;
    }

    /** Tokens of request i served from the cache when its prefix is kept: whole blocks, never the last prompt token. */
    private int cacheableTokens(int i) {
        if (!deployment.enablePrefixCaching()) {
            return 0;
        }
        int block = deployment.blockSize();
        return Math.min(moments.warmPrefixTokens(i), moments.promptTokens(i) - 1) / block * block;
    }

    private Service service(double retention) {
        return service(retention, false);
    }

    /** The model's parameters at this share of warm prefixes kept; {@code wide} tables for a closed loop. */
    private Service service(double retention, boolean wide) {
        int n = moments.samples();
        double cached = 0;
        for (int i = 0; i < n; i++) {
            cached += retention * cacheableTokens(i);
        }
        cached /= n;
        double keptPrefixes = cachesPrefixes() ? retention * moments.distinctPrefixTokens() : 0;
        double footprint = footprintTokens(cached);
        double prompt = moments.meanPromptTokens() - cached;
        double leftover = Math.max(0, prompt - deployment.blockSize()) / 2;
        double sustained = Math.max(1, (kv.tokens() - keptPrefixes - leftover) / footprint);
        boolean kvBound = sustained < deployment.maxNumSeqs();
        int batchLimit = kvBound ? (int) Math.ceil(sustained) : deployment.maxNumSeqs();
        if (oneAtATime()) {
            return new Service(retention, cached, footprint, leftover, sustained, batchLimit, false, 0, 0, null,
                    sequentialService(retention));
        }
        double preempted = kvBound ? preemptionsPerRequest(prompt) : 0;
        // a victim's context covers the overflow, E[L] past the leftover by memorylessness, and what it frees beyond
        // (about half a prompt), all recomputed when it is readmitted. With prefix caching (vLLM V1) its freed blocks
        // stay cached at the tail of the free queue: the others' growth until the next departure, E[L] tokens again,
        // eats its last blocks, and it finds the rest when it is readmitted
        double recompute = preempted * (outputTokens.mean() + (deployment.enablePrefixCaching() ? 0 : prompt / 2));
        double[][] shapes = promptShapes(retention);
        TabulatedIterationTimes times = tables.tables(batchLimit, shapes, wide);
        BatchingServer unlimited = new BatchingServer(batchLimit, outputTokens, times);
        int peak = peakBatch(unlimited);
        if (peak < batchLimit) {
            return new Service(retention, cached, footprint, leftover, sustained, peak, true, 0, 0,
                    new BatchingServer(peak, outputTokens, times.upTo(peak)), null);
        }
        BatchingServer server = kvBound ? new BatchingServer(batchLimit, outputTokens,
                tables.atKvLimit(times, new IterationTables.KvLimit(sustained, recompute), shapes)) : unlimited;
        return new Service(retention, cached, footprint, leftover, sustained, batchLimit, false, preempted, recompute,
                server, null);
    }

    /**
     * The batch at which requests complete fastest, the KV cache aside: the chain's limit when it comes before the KV
     * cache's and --max-num-seqs. Past it an iteration's prefill and attention grow faster than the batch: the token
     * budget left beside the decodes prefills fewer prompts than finish (2,048-token prompts in a budget of 512: 21),
     * or prefill and attention over longer contexts outgrow it (qwen2.5-7b with 1,024-token prompts: 164). The
     * simulator's capacity agrees with the rate at this batch within 2% on every row of bench/queueing's matrix, and in
     * those two by 1.5% and 1.9% where the rate at --max-num-seqs was 3.7 times and 4% off.
     */
    private static int peakBatch(BatchingServer server) {
        int peak = 1;
        for (int n = 2; n <= server.maxNumSeqs(); n++) {
            if (server.departureRatePerS(n) > server.departureRatePerS(peak)) {
                peak = n;
            }
        }
        return peak;
    }

    /**
     * Preemptions per request at the KV limit. The engine admits a prompt when its blocks are free, so after the
     * admissions a departure allows, the free space S is a leftover below one prompt, about uniform on (0, P). Until
     * the next departure the running sequences grow one token an iteration each, in all about Exp(E[L]) tokens
     * (departures come N / E[L] an iteration, N the running sequences); growth past the leftover preempts the newest:
     * P(G > S) = (E[L] / P)(1 - e^{-P / E[L]}). The victim waits at the head of the queue and is readmitted with the
     * next departure's prompts. It frees more than the overflow, so one victim per overflow.
     */
    private double preemptionsPerRequest(double promptTokens) {
        double growth = outputTokens.mean();
        return promptTokens <= 0 ? 1 : growth / promptTokens * -Math.expm1(-promptTokens / growth);
    }

    /** Prompt shapes {new tokens, cached tokens, probability}, condensed to at most {@link #PROMPT_ATOMS} atoms. */
    private double[][] promptShapes(double retention) {
        int n = moments.samples();
        TreeMap<Long, Double> weights = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            int prompt = moments.promptTokens(i);
            int hit = cacheableTokens(i);
            if (hit > 0) {
                weights.merge((long) (prompt - hit) << 32 | hit, retention / n, Double::sum);
            }
            weights.merge((long) prompt << 32, hit > 0 ? (1 - retention) / n : 1.0 / n, Double::sum);
        }
        weights.values().removeIf(w -> w <= 0);
        int bins = Math.min(PROMPT_ATOMS, weights.size());
        double[][] atoms = new double[bins][3];
        double cumulative = 0;
        for (Map.Entry<Long, Double> e : weights.entrySet()) {
            double w = e.getValue();
            double[] atom = atoms[(int) Math.min(bins - 1, cumulative * bins)];
            atom[0] += (e.getKey() >>> 32) * w;
            atom[1] += (e.getKey() & 0xffffffffL) * w;
            atom[2] += w;
            cumulative += w;
        }
        return Arrays.stream(atoms).filter(a -> a[2] > 0)
                .map(a -> new double[] {a[0] / a[2], a[1] / a[2], a[2]}).toArray(double[][]::new);
    }

    /**
     * One request at a time: each sampled request's service S (its prefill chunks, then a decode step per further
     * token at its growing context), the part up to its first token, and its TPOT; [S, first token, TPOT].
     */
    private DiscreteDistribution[] sequentialService(double retention) {
        int n = moments.samples();
        int longest = 0;
        for (int i = 0; i < n; i++) {
            longest = Math.max(longest, moments.promptTokens(i) + moments.outputTokens(i));
        }
        double[] decodeBefore = new double[longest + 1]; // sum of decode steps at contexts 0..c-1
        for (int c = 1; c <= longest; c++) {
            decodeBefore[c] = decodeBefore[c - 1] + tables.singleDecodeSeconds(c - 1);
        }
        double[] service = new double[n];
        double[] first = new double[n];
        double[] tpot = new double[n];
        int tpots = 0;
        Map<Long, Double> prefills = new HashMap<>();
        SplitHits hits = new SplitHits(retention);
        for (int i = 0; i < n; i++) {
            int prompt = moments.promptTokens(i);
            int out = moments.outputTokens(i);
            int cached = hits.next() ? cacheableTokens(i) : 0;
            long key = (long) prompt << 32 | cached;
            first[i] = prefills.computeIfAbsent(key, k -> tables.prefillSeconds(0, prompt - cached, cached, 1)[0]);
            double decodes = decodeBefore[prompt + out - 1] - decodeBefore[prompt];
            service[i] = first[i] + decodes;
            if (out > 1) {
                tpot[tpots++] = decodes / (out - 1);
            }
        }
        return new DiscreteDistribution[] {DiscreteDistribution.ofSamples(service), DiscreteDistribution.ofSamples(first),
                DiscreteDistribution.ofSamples(tpots == 0 ? new double[] {0} : Arrays.copyOf(tpot, tpots))};
    }

    /** Spreads a kept share of cache hits evenly over the requests, deterministically. */
    private static final class SplitHits {
        private final double share;
        private double credit;

        SplitHits(double share) {
            this.share = share;
        }

        boolean next() {
            credit += share;
            if (credit >= 1 - 1e-12) {
                credit -= 1;
                return true;
            }
            return false;
        }
    }
}
