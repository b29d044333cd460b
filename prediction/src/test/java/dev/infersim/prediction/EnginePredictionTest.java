package dev.infersim.prediction;

import dev.infersim.engine.BatchShape;
import dev.infersim.engine.CostModel;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.queueing.LatencyModel;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EnginePredictionTest {
    private static final Deployment H100_8B = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();

    private static EnginePrediction prediction(Deployment d, WorkloadSpec spec) {
        return new EnginePrediction(d, WorkloadMoments.of(Workload.open(spec), 20_000));
    }

    private static WorkloadSpec random(int input, int output) {
        return WorkloadSpec.builder().datasetName("random").randomInputLen(input).randomOutputLen(output)
                .requestRate(2).numPrompts(20_000).seed(1).build();
    }

    @Test
    void oneSequenceDecodesExactlyAsFastAsProfileReports() {
        EnginePrediction p = prediction(H100_8B, random(512, 256));
        CostModel cost = new RooflineCostModel(H100_8B);
        int context = (int) Math.round(p.decodeContextTokens());
        // what profile prints for a decode step of one sequence at this context
        BatchShape one = new BatchShape();
        one.addDecode(context);
        double profiled = cost.stepNanos(one) / 1e6;

        assertEquals(profiled, 1e3 * p.serviceAt(2, 1).batching().decodeIterationSeconds(1), 0, "no fitted intercept");
        LatencyModel light = p.at(0.01);
        assertEquals(profiled, 1e3 * light.meanTpotSeconds(), 0.002 * profiled, "alone, TPOT is the one-sequence step");
    }

    @Test
    void prefixCachingShortensThePrefillOfWarmRequests() {
        WorkloadSpec prefixes = WorkloadSpec.builder().datasetName("prefix_repetition").prefixRepetitionPrefixLen(1024)
                .prefixRepetitionSuffixLen(128).prefixRepetitionNumPrefixes(10).prefixRepetitionOutputLen(128)
                .requestRate(20).numPrompts(20_000).seed(1).build();
        LatencyModel cached = prediction(H100_8B, prefixes).at(20);
        LatencyModel uncached = prediction(H100_8B.toBuilder().enablePrefixCaching(false).build(), prefixes).at(20);

        assertTrue(cached.meanTtftSeconds() < 0.5 * uncached.meanTtftSeconds(),
                cached.meanTtftSeconds() + " vs " + uncached.meanTtftSeconds());
        assertEquals(1024, prediction(H100_8B, prefixes).serviceAt(20, 1).cachedTokensPerRequest(), 1024 * 0.001,
                "every request after the first of its prefix reads the whole prefix from the cache");
    }

    @Test
    void aSmallKvCacheCapsTheBatchBelowMaxNumSeqs() {
        Deployment small = H100_8B.toBuilder().gpuMemoryUtilization(0.25).build();
        EnginePrediction p = prediction(small, random(512, 512));
        // about 21,000 tokens of cache over a mean running context of 512 + 256.5 + half a block
        assertTrue(p.batchLimit() < 256 && p.batchLimit() > 20, "batch limit " + p.batchLimit());
        assertEquals(p.kv().tokens() / (512 + 256.5 + 8), p.batchLimit(), 1.0);
    }
}
