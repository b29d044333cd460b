package dev.infersim.prediction;

import dev.infersim.engine.BatchShape;
import dev.infersim.engine.CostModel;
import dev.infersim.engine.Deployment;
import dev.infersim.queueing.DiscreteDistribution;
import dev.infersim.queueing.TabulatedIterationTimes;

/**
 * The iteration times of the continuous-batching chain, priced by the engine's own {@link CostModel}: for n = 0..B the
 * decode iteration, the prefill of k prompts admitted together beside n decodes (chunked to the token budget when
 * chunked prefill is on, with the iteration that gives each its first token), and the mean iteration with the prefill
 * of n / E[L] admissions folded in; at the KV limit, the mean iteration with admissions at departures and the
 * preempted requests' recompute. Nothing is fitted: each time is what the cost model says of that batch, decoding
 * sequences at the workload's mean decode context.
 */
final class IterationTables {
    /**
     * Prompts admitted together that the prefill table covers beside n >= 1 decodes (B for an idle engine, which a closed
     * loop's start fills at once); beyond, it grows by its last step.
     */
    private static final int PREFILL_TABLE_PROMPTS = 24;
    /** Most rounds of the fixed point for the prompts an episode carries; one that has not settled by then diverges. */
    private static final int EPISODE_ROUNDS = 500;

    private final Deployment deployment;
    private final CostModel cost;
    private final DiscreteDistribution outputTokens;
    private final double decodeContext;
    private final BatchShape shape = new BatchShape();

    IterationTables(Deployment deployment, CostModel cost, DiscreteDistribution outputTokens, double decodeContext) {
        this.deployment = deployment;
        this.cost = cost;
        this.outputTokens = outputTokens;
        this.decodeContext = decodeContext;
    }

    /** Whole prompts of {@code newTokens} one iteration's token budget holds (at least 1). */
    private int promptsPerBudget(int newTokens) {
        return Math.max(1, deployment.maxNumBatchedTokens() / Math.max(1, newTokens));
    }

    /** The sequences decoding at the KV limit on average, and the tokens each request recomputes after preemptions. */
    record KvLimit(double runningSeqs, double recomputeTokens) {
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
    TabulatedIterationTimes atKvLimit(TabulatedIterationTimes tables, KvLimit limit, double[][] prompts) {
        int[] prompt = meanPrompt(prompts);
        int b = tables.maxBatch();
        return tables.withMeanSeconds(b, Math.max(tables.decodeSeconds(b),
                kvLimitIteration(limit, prompt[0], prompt[1]) * b / limit.runningSeqs()));
    }

    /** The chain's tables for n = 0..B from the cost model. */
    TabulatedIterationTimes tables(int maxBatch, double[][] prompts) {
        return tables(maxBatch, prompts, false);
    }

    /**
     * As {@link #tables(int, double[][])}; {@code wide}: the prefill rows of every n run to the prompts one iteration's
     * budget holds (at most B), so that a closed loop's lock step learns exactly how many of its prompts an iteration
     * takes beside the others' decodes (first-token rows beyond {@value #PREFILL_TABLE_PROMPTS} prompts stay scaled).
     */
    TabulatedIterationTimes tables(int maxBatch, double[][] prompts, boolean wide) {
        double meanOutput = outputTokens.mean();
        int[] prompt = meanPrompt(prompts);
        int meanNew = prompt[0];
        int meanCached = prompt[1];
        double[] decode = new double[maxBatch + 1];
        double[] mean = new double[maxBatch + 1];
        double[][] prefill = new double[maxBatch + 1][];
        double[][] prefillIterations = new double[maxBatch + 1][];
        double[][][] firstToken = new double[maxBatch + 1][][];
        for (int n = 0; n <= maxBatch; n++) {
            decode[n] = n == 0 ? 0 : decodeSeconds(n);
            double admissions = n / meanOutput;
            // an idle engine's row runs to B prompts: a closed loop's clients all send their first requests at once
            int rows = n == 0 ? Math.max(PREFILL_TABLE_PROMPTS, maxBatch)
                    : wide ? Math.max(PREFILL_TABLE_PROMPTS, Math.min(maxBatch, promptsPerBudget(meanNew) + 1))
                    : PREFILL_TABLE_PROMPTS;
            int firstTokenRows = n == 0 ? rows : PREFILL_TABLE_PROMPTS;
            int kMax = (int) Math.max(rows, Math.ceil(admissions + 8 * Math.sqrt(admissions) + 8));
            double[] seconds = new double[kMax + 1];
            double[] iterations = new double[kMax + 1];
            seconds[0] = decode[n];
            iterations[0] = 1;
            double[][] firstTokens = new double[firstTokenRows + 1][];
            for (int k = 1; k <= kMax; k++) {
                if (k <= firstTokenRows) {
                    firstTokens[k] = new double[k];
                }
                double[] together = prefillSeconds(n, meanNew, meanCached, k, k <= firstTokenRows ? firstTokens[k] : null);
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
            prefill[n] = new double[rows];
            prefillIterations[n] = new double[rows];
            firstToken[n] = new double[firstTokenRows][];
            for (int k = 1; k <= rows; k++) {
                prefill[n][k - 1] = alone + seconds[k] - seconds[1];
                if (k <= firstTokenRows) {
                    firstToken[n][k - 1] = new double[k];
                    for (int j = 0; j < k; j++) {
                        firstToken[n][k - 1][j] = alone + firstTokens[k][j] - seconds[1];
                    }
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
        double full = iterationWith(n, perIteration, cachedTokens, (int) Math.max(1, Math.round((double) perIteration / newTokens)));
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

    /**
     * One iteration of n decodes and {@code prefillTokens} new prompt tokens after the given cached context, the first
     * chunks of {@code prompts} requests.
     */
    private double iterationWith(int n, int prefillTokens, int cachedTokens, int prompts) {
        shape.clear();
        addDecodes(n);
        shape.addPrefill(Math.max(1, prefillTokens), cachedTokens, true);
        shape.addNewRequests(prompts);
        return cost.stepNanos(shape) / 1e9;
    }

    /**
     * The iterations that prefill {@code count} prompts of {@code newTokens} new tokens after {@code cachedTokens}
     * cached ones while n others decode: [seconds, iterations]. With chunked prefill each iteration takes what the
     * token budget leaves after the decodes; without, a whole prompt per iteration while it fits the budget.
     */
    double[] prefillSeconds(int n, int newTokens, int cachedTokens, int count) {
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
                if (done[j] == 0) {
                    shape.addNewRequests(1); // its first chunk: the engine takes the request in
                }
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

    /** One decode step of a single sequence at {@code context} tokens: what one request alone costs per token. */
    double singleDecodeSeconds(int context) {
        shape.clear();
        shape.addDecode(context);
        return cost.stepNanos(shape) / 1e9;
    }
}
