package dev.infersim.prediction;

import dev.infersim.engine.BatchShape;
import dev.infersim.engine.CostModel;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.queueing.BatchingServer;
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
 * token budget when chunked prefill is on), and the mean iteration with the prefill of n / E[L] admissions folded in.
 *
 * <p>Prefix caching: a request whose prefix group was sent before finds that prefix's full blocks cached, unless the
 * cache evicted them; the share kept is what the cache holds beside the running sequences, (M - running tokens) / F
 * for F the tokens of all distinct prefixes. KV capacity: the batch is capped at the sequences M tokens sustain on
 * average, N = (M - kept prefixes - leftover) / (mean context of a running sequence + half a block), the memory-time
 * limit of Nie, Si and Zhou (arXiv 2605.04595), less the leftover the engine cannot fill (below one prompt, half a
 * prompt on average). At that limit the cache frees room only at departures, so admissions come with them, and the
 * engine, admitting whatever fits, outgrows the cache and preempts the newest request, whose recompute rides with the
 * next departure's prompt ({@link #kvLimitIteration}).
 */
public final class EnginePrediction {
    /** Most prompt shapes the tables average over; beyond, equal-weight bins. */
    private static final int PROMPT_ATOMS = 48;
    /** Prompts admitted together that the prefill table covers; beyond, it grows by its last step. */
    private static final int PREFILL_TABLE_PROMPTS = 24;
    /** Most rounds of the fixed point for the prompts an episode carries; one that has not settled by then diverges. */
    private static final int EPISODE_ROUNDS = 500;

    private final Deployment deployment;
    private final CostModel cost;
    private final WorkloadMoments moments;
    private final KvCapacity kv;
    private final BatchShape shape = new BatchShape();
    private final DiscreteDistribution outputTokens;
    private final double decodeContext;
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
        this.deployment = deployment;
        this.cost = cost;
        this.moments = moments;
        this.kv = KvCapacity.of(deployment);
        double[] lengths = new double[moments.samples()];
        for (int i = 0; i < lengths.length; i++) {
            lengths[i] = moments.outputTokens(i);
        }
        this.outputTokens = DiscreteDistribution.ofSamples(lengths);
        this.decodeContext = moments.meanDecodeContextTokens();
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
     * N clients in a closed loop with no think time ({@link ClosedLoopBatchingModel}), the prefix cache keeping what it
     * holds beside the min(N, B) sequences running. Not for one request at a time.
     */
    public ClosedLoopBatchingModel closedLoop(int clients) {
        Service s = cachesPrefixes() ? service(retention(Math.min(clients, full.batchLimit()))) : full;
        return new ClosedLoopBatchingModel(s.batching(), clients);
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
        return s.batching().atArrivalRate(ratePerS, arrivalScv, outputTokens.squaredCoefficientOfVariation());
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
        TabulatedIterationTimes tables = iterationTimes(batchLimit, shapes);
        BatchingServer unlimited = new BatchingServer(batchLimit, outputTokens, tables);
        int peak = peakBatch(unlimited);
        if (peak < batchLimit) {
            return new Service(retention, cached, footprint, leftover, sustained, peak, true, 0, 0,
                    new BatchingServer(peak, outputTokens, tables.upTo(peak)), null);
        }
        BatchingServer server = kvBound ? new BatchingServer(batchLimit, outputTokens,
                atKvLimit(tables, new KvLimit(sustained, recompute), shapes)) : unlimited;
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

    /** The sequences decoding at the KV limit on average, and the tokens each request recomputes after preemptions. */
    private record KvLimit(double runningSeqs, double recomputeTokens) {
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

    /** The mean prompt of these shapes, whole tokens: {new (at least 1), cached}. */
    private static int[] meanPrompt(double[][] prompts) {
        double newTokens = 0;
        double cachedTokens = 0;
        for (double[] p : prompts) {
            newTokens += p[2] * p[0];
            cachedTokens += p[2] * p[1];
        }
        return new int[] {(int) Math.max(1, Math.round(newTokens)), (int) Math.round(cachedTokens)};
    }

    /**
     * The tables at the KV limit: the mean iteration at B is the one at the limit ({@link #kvLimitIteration}),
     * stretched by B / N so that the chain's B slots complete requests at the rate the N sequences the cache holds do.
     */
    private TabulatedIterationTimes atKvLimit(TabulatedIterationTimes tables, KvLimit limit, double[][] prompts) {
        int[] prompt = meanPrompt(prompts);
        int b = tables.maxBatch();
        return tables.withMeanSeconds(b, Math.max(tables.decodeSeconds(b),
                kvLimitIteration(limit, prompt[0], prompt[1]) * b / limit.runningSeqs()));
    }

    /** The chain's tables for n = 0..B from the cost model. */
    private TabulatedIterationTimes iterationTimes(int maxBatch, double[][] prompts) {
        double meanOutput = outputTokens.mean();
        int[] prompt = meanPrompt(prompts);
        int meanNew = prompt[0];
        int meanCached = prompt[1];
        double[] decode = new double[maxBatch + 1];
        double[] mean = new double[maxBatch + 1];
        double[][] prefill = new double[maxBatch + 1][];
        double[][] prefillIterations = new double[maxBatch + 1][];
        double[][][] firstToken = new double[maxBatch + 1][PREFILL_TABLE_PROMPTS][];
        for (int n = 0; n <= maxBatch; n++) {
            decode[n] = n == 0 ? 0 : decodeSeconds(n);
            double admissions = n / meanOutput;
            int kMax = (int) Math.max(PREFILL_TABLE_PROMPTS, Math.ceil(admissions + 8 * Math.sqrt(admissions) + 8));
            double[] seconds = new double[kMax + 1];
            double[] iterations = new double[kMax + 1];
            seconds[0] = decode[n];
            iterations[0] = 1;
            double[][] firstTokens = new double[PREFILL_TABLE_PROMPTS + 1][];
            for (int k = 1; k <= kMax; k++) {
                if (k <= PREFILL_TABLE_PROMPTS) {
                    firstTokens[k] = new double[k];
                }
                double[] together = prefillSeconds(n, meanNew, meanCached, k, k <= PREFILL_TABLE_PROMPTS ? firstTokens[k] : null);
                seconds[k] = together[0];
                iterations[k] = together[1];
            }
            // one prompt: averaged over the prompt shapes (attention is not linear in length); more: the mean shape's increments
            double alone = 0;
            double aloneIterations = 0;
            for (double[] p : prompts) {
                double[] one = prefillSeconds(n, (int) Math.round(p[0]), (int) Math.round(p[1]), 1);
                alone += p[2] * one[0];
                aloneIterations += p[2] * one[1];
            }
            prefill[n] = new double[PREFILL_TABLE_PROMPTS];
            prefillIterations[n] = new double[PREFILL_TABLE_PROMPTS];
            for (int k = 1; k <= PREFILL_TABLE_PROMPTS; k++) {
                prefill[n][k - 1] = alone + seconds[k] - seconds[1];
                firstToken[n][k - 1] = new double[k];
                for (int j = 0; j < k; j++) {
                    firstToken[n][k - 1][j] = alone + firstTokens[k][j] - seconds[1];
                }
                prefillIterations[n][k - 1] = Math.max(1, aloneIterations + iterations[k] - iterations[1]);
            }
            mean[n] = n == 0 ? 0 : Math.max(decode[n], meanIteration(n, admissions, seconds, iterations, meanNew, meanCached));
        }
        return new TabulatedIterationTimes(decode, mean, prefill, prefillIterations, firstToken);
    }

    /**
     * The mean iteration with n decoding and n / E[L] prompts admitted an iteration to replace those that finish. They
     * come in episodes: K ~ Poisson(theta) prompts prefilled together beside the decodes, over m_K iterations (more than
     * one when chunked prefill spreads them over the token budget), while the next ones wait for the episode to end, so
     * theta = (n / E[L]) E[m_K]. The mean iteration is E[time of the episode] / E[m_K], the cost model's own (convex)
     * price of each K. When no theta balances (the token budget left beside n decodes cannot take n / E[L] prompts an
     * iteration), the budget binds: admissions, hence completions, are (budget - n) / P per full iteration.
     */
    private double meanIteration(int n, double admissions, double[] seconds, double[] iterations, int newTokens,
                                 int cachedTokens) {
        double theta = admissions;
        double[] episode = episodeMeans(theta, seconds, iterations);
        for (int i = 0; i < EPISODE_ROUNDS; i++) {
            double next = admissions * episode[1];
            if (!(next < seconds.length / 2.0)) {
                episode = null;
                break;
            }
            boolean settled = Math.abs(next - theta) <= 1e-9 * theta;
            theta = next;
            episode = episodeMeans(theta, seconds, iterations);
            if (settled) {
                break;
            }
            if (i == EPISODE_ROUNDS - 1) {
                episode = null;
            }
        }
        int room = deployment.maxNumBatchedTokens() - n;
        int perIteration = deployment.enableChunkedPrefill() ? room : room / newTokens * newTokens;
        if (perIteration <= 0) {
            return Double.MAX_VALUE / 4;
        }
        double full = iterationWith(n, perIteration, cachedTokens);
        double budgetBound = admissions * newTokens / perIteration * full;
        return episode == null ? Math.max(full, budgetBound) : Math.max(episode[0] / episode[1], budgetBound);
    }

    /** [E[seconds], E[iterations]] of an episode with K ~ Poisson(theta) prompts. */
    private static double[] episodeMeans(double theta, double[] seconds, double[] iterations) {
        double poisson = Math.exp(-theta);
        double time = 0;
        double count = 0;
        for (int k = 0; k < seconds.length; k++) {
            time += poisson * seconds[k];
            count += poisson * iterations[k];
            poisson *= theta / (k + 1);
        }
        return new double[] {time, count};
    }

    /**
     * The mean iteration at the KV limit, where N (not a whole number) sequences decode on average. The cache frees
     * room only when a request finishes, so admissions come at departures, N / E[L] an iteration, each with its prompt
     * and the victims of the last overflow, readmitted with it: a prompt of P + R tokens (R the recompute per request).
     * Interpolated between the whole batches around N.
     */
    private double kvLimitIteration(KvLimit limit, int newTokens, int cachedTokens) {
        double running = limit.runningSeqs();
        int below = (int) Math.max(1, Math.floor(running));
        int promptTokens = newTokens + (int) Math.round(limit.recomputeTokens());
        double above = iterationAtKvLimit(below + 1, running, promptTokens, cachedTokens);
        double at = iterationAtKvLimit(below, running, promptTokens, cachedTokens);
        return at + (running - below) * (above - at);
    }

    /** The mean iteration of n decodes with Poisson(N / E[L]) departures an iteration, each admitting a prompt of P + R. */
    private double iterationAtKvLimit(int n, double running, int promptTokens, int cachedTokens) {
        double departures = running / outputTokens.mean();
        int kMax = (int) Math.ceil(departures + 8 * Math.sqrt(departures) + 8);
        double[] seconds = new double[kMax + 1];
        double[] iterations = new double[kMax + 1];
        seconds[0] = decodeSeconds(n);
        iterations[0] = 1;
        for (int k = 1; k <= kMax; k++) {
            double[] together = prefillSeconds(n, promptTokens, cachedTokens, k);
            seconds[k] = together[0];
            iterations[k] = together[1];
        }
        return meanIteration(n, departures, seconds, iterations, promptTokens, cachedTokens);
    }

    /** One iteration of n decodes and {@code prefillTokens} new prompt tokens after the given cached context. */
    private double iterationWith(int n, int prefillTokens, int cachedTokens) {
        shape.clear();
        addDecodes(n);
        shape.addPrefill(Math.max(1, prefillTokens), cachedTokens, true);
        return cost.stepNanos(shape) / 1e9;
    }

    /**
     * The iterations that prefill {@code count} prompts of {@code newTokens} new tokens after {@code cachedTokens}
     * cached ones while n others decode: [seconds, iterations]. With chunked prefill each iteration takes what the
     * token budget leaves after the decodes; without, a whole prompt per iteration while it fits the budget.
     */
    private double[] prefillSeconds(int n, int newTokens, int cachedTokens, int count) {
        return prefillSeconds(n, newTokens, cachedTokens, count, null);
    }

    /** As above, with the end of the iteration that gives each prompt its first token in {@code firstTokens}. */
    private double[] prefillSeconds(int n, int newTokens, int cachedTokens, int count, double[] firstTokens) {
        int budget = Math.max(1, deployment.maxNumBatchedTokens() - n);
        int[] done = new int[count];
        double seconds = 0;
        int iterations = 0;
        int first = 0;
        while (first < count) {
            shape.clear();
            addDecodes(n);
            int left = budget;
            for (int j = first; j < count && left > 0; j++) {
                int rest = newTokens - done[j];
                int chunk = deployment.enableChunkedPrefill() ? Math.min(rest, left) : (rest <= left || j == first ? rest : 0);
                if (chunk == 0) {
                    break;
                }
                shape.addPrefill(chunk, cachedTokens + done[j], done[j] + chunk == newTokens);
                done[j] += chunk;
                left -= chunk;
            }
            seconds += cost.stepNanos(shape) / 1e9;
            iterations++;
            while (first < count && done[first] == newTokens) {
                if (firstTokens != null) {
                    firstTokens[first] = seconds;
                }
                first++;
            }
        }
        return new double[] {seconds, iterations};
    }

    private void addDecodes(int n) {
        int context = (int) Math.round(decodeContext);
        for (int i = 0; i < n; i++) {
            shape.addDecode(context);
        }
    }

    /** One iteration of n decodes at the mean decode context. */
    private double decodeSeconds(int n) {
        shape.clear();
        addDecodes(n);
        return cost.stepNanos(shape) / 1e9;
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
            shape.clear();
            shape.addDecode(c - 1);
            decodeBefore[c] = decodeBefore[c - 1] + cost.stepNanos(shape) / 1e9;
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
            first[i] = prefills.computeIfAbsent(key, k -> prefillSeconds(0, prompt - cached, cached, 1)[0]);
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
