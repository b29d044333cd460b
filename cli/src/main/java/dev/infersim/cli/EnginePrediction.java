package dev.infersim.cli;

import dev.infersim.engine.BatchShape;
import dev.infersim.engine.CostModel;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.queueing.BatchingServer;
import dev.infersim.queueing.ContinuousBatchingModel;
import dev.infersim.queueing.FittedIterationTime;
import dev.infersim.queueing.IterationTimeFit;

import java.util.ArrayList;
import java.util.List;

/**
 * Fits the continuous-batching chain of {@code dev.infersim.queueing} to a deployment and a workload: the iteration time
 * tau(b, prefill tokens) = alpha + beta_d b + beta_p p is fitted by least squares on relative error to the engine
 * cost model's step times
 * over a grid of decode batches (at the workload's mean decode context) and prefill chunks, the batch limit is
 * {@code --max-num-seqs} capped by what the KV cache holds on average, and the prefill iteration of a request is costed
 * by the engine model at the mean batch the chain predicts for the rate.
 */
final class EnginePrediction {
    private final Deployment deployment;
    private final CostModel cost;
    private final WorkloadMoments moments;
    private final FittedIterationTime fit;
    private final BatchingServer server;

    EnginePrediction(Deployment deployment, WorkloadMoments moments) {
        this(deployment, new RooflineCostModel(deployment), moments);
    }

    EnginePrediction(Deployment deployment, CostModel cost, WorkloadMoments moments) {
        this.deployment = deployment;
        this.cost = cost;
        this.moments = moments;
        this.fit = fitIterationTime();
        KvCapacity kv = KvCapacity.of(deployment);
        this.server = new BatchingServer(deployment.maxNumSeqs(), moments.meanPromptTokens(), moments.meanOutputTokens(),
                fit.iterationTime(), 0).limitedByKvCache(kv.tokens());
    }

    private FittedIterationTime fitIterationTime() {
        int context = (int) Math.round(moments.meanDecodeContextTokens());
        // Two batch sizes at least, or the decode slope has nothing to fit: with --max-num-seqs 1 the chain only
        // evaluates tau(1), and the cost model prices a batch of 2 as well as any other.
        int maxBatch = Math.max(2, deployment.maxNumSeqs());
        int[] chunks = {0, 256, 1024, Math.min(deployment.maxNumBatchedTokens(), 4096)};
        List<int[]> grid = new ArrayList<>();
        for (int b = 1; b <= maxBatch; b = b < 8 ? b + 1 : b * 2) {
            for (int chunk : chunks) {
                grid.add(new int[] {b, chunk});
            }
        }
        grid.add(new int[] {maxBatch, 0});
        int[] batches = new int[grid.size()];
        int[] prefill = new int[grid.size()];
        double[] seconds = new double[grid.size()];
        for (int i = 0; i < grid.size(); i++) {
            batches[i] = grid.get(i)[0];
            prefill[i] = grid.get(i)[1];
            seconds[i] = stepSeconds(batches[i], context, prefill[i]);
        }
        return IterationTimeFit.fitDecodeAndPrefillRelative(batches, prefill, seconds);
    }

    /** The engine's time for b decoding sequences at a context plus one prefill chunk at the start of a prompt. */
    private double stepSeconds(int batch, int context, int prefillTokens) {
        BatchShape s = new BatchShape();
        for (int i = 0; i < batch; i++) {
            s.addDecode(context);
        }
        if (prefillTokens > 0) {
            s.addPrefill(prefillTokens, 0, true);
        }
        return cost.stepNanos(s) / 1e9;
    }

    /** The iterations that prefill a mean prompt (chunked to the token budget) while {@code batch} others decode. */
    private double prefillSeconds(int batch) {
        int prompt = (int) Math.round(moments.meanPromptTokens());
        int budget = deployment.maxNumBatchedTokens();
        int context = (int) Math.round(moments.meanDecodeContextTokens());
        double total = 0;
        for (int done = 0; done < prompt; ) {
            int chunk = Math.min(Math.max(1, budget - batch), prompt - done);
            total += stepSeconds(batch, context, chunk);
            done += chunk;
        }
        return total;
    }

    FittedIterationTime fit() {
        return fit;
    }

    BatchingServer server() {
        return server;
    }

    WorkloadMoments moments() {
        return moments;
    }

    /** The chain at this rate, with the prefill iteration costed at the chain's own mean batch. Throws above saturation. */
    ContinuousBatchingModel at(double ratePerS) {
        ContinuousBatchingModel first = server.atArrivalRate(ratePerS);
        int meanBatch = (int) Math.round(first.meanBatchSize());
        double prefillIteration = prefillSeconds(meanBatch);
        return new BatchingServer(server.maxNumSeqs(), server.meanPromptTokens(), server.meanOutputTokens(),
                server.iterationTime(), prefillIteration).atArrivalRate(ratePerS);
    }
}
