package dev.infersim.cli;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.RooflineCostModel;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the engine can do, for people: decode step time and token rate against batch size at one context length (the
 * curve whose flattening is continuous batching's whole gain), prefill time against prompt length, and the KV cache's
 * capacity. The same cost model as {@code profile}.
 */
record EngineSummary(int contextTokens, List<Integer> decodeBatches, List<Double> decodeStepMs,
                     List<Integer> prefillTokens, List<Double> prefillStepMs, long kvTokens, int kvBlocks,
                     double maxConcurrentAtContext) {

    static EngineSummary of(Deployment d, int contextTokens) {
        RooflineCostModel cost = new RooflineCostModel(d);
        List<Integer> batches = new ArrayList<>();
        List<Double> decodeMs = new ArrayList<>();
        for (int b = 1; b <= d.maxNumSeqs(); b *= 2) {
            batches.add(b);
            decodeMs.add(StepTimes.timed(cost, new StepTimes.Row("decode", b, contextTokens, b, 0)).stepMs());
        }
        List<Integer> prompts = new ArrayList<>();
        List<Double> prefillMs = new ArrayList<>();
        for (int len = 128; len <= Math.min(d.maxNumBatchedTokens(), 16_384); len *= 2) {
            prompts.add(len);
            prefillMs.add(StepTimes.timed(cost, new StepTimes.Row("prefill", 1, 0, len, 0)).stepMs());
        }
        KvCapacity kv = KvCapacity.of(d);
        return new EngineSummary(contextTokens, batches, decodeMs, prompts, prefillMs, kv.tokens(),
                (int) (kv.tokens() / d.blockSize()), (double) kv.tokens() / contextTokens);
    }

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("context_tokens", contextTokens);
        m.put("decode_batch", decodeBatches);
        m.put("decode_step_ms", decodeStepMs);
        List<Double> tokensPerS = new ArrayList<>();
        for (int i = 0; i < decodeBatches.size(); i++) {
            tokensPerS.add(decodeBatches.get(i) * 1e3 / decodeStepMs.get(i));
        }
        m.put("decode_tokens_per_s", tokensPerS);
        m.put("prefill_tokens", prefillTokens);
        m.put("prefill_step_ms", prefillStepMs);
        m.put("kv_cache_tokens", kvTokens);
        m.put("kv_cache_blocks", kvBlocks);
        m.put("max_concurrent_sequences_at_context", maxConcurrentAtContext);
        return m;
    }
}
