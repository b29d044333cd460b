package dev.infersim.demo;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import dev.infersim.engine.BatchShape;
import dev.infersim.engine.CostModel;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.RooflineCostModel;

import java.util.ArrayList;
import java.util.List;

/**
 * What the engine can do, for people: decode step time and token rate against batch size at one context length (the
 * curve whose flattening is continuous batching's whole gain), prefill time against prompt length, and the KV cache's
 * capacity. The same cost model and step shapes as {@code profile}'s grid.
 */
@JsonPropertyOrder({"context_tokens", "decode_batch", "decode_step_ms", "decode_tokens_per_s", "prefill_tokens",
        "prefill_step_ms", "kv_cache_tokens", "kv_cache_blocks", "max_concurrent_sequences_at_context"})
record EngineSummary(@JsonProperty("context_tokens") int contextTokens,
                     @JsonProperty("decode_batch") List<Integer> decodeBatches,
                     @JsonProperty("decode_step_ms") List<Double> decodeStepMs,
                     @JsonProperty("prefill_tokens") List<Integer> prefillTokens,
                     @JsonProperty("prefill_step_ms") List<Double> prefillStepMs,
                     @JsonProperty("kv_cache_tokens") long kvTokens, @JsonProperty("kv_cache_blocks") int kvBlocks,
                     @JsonProperty("max_concurrent_sequences_at_context") double maxConcurrentAtContext) {

    static EngineSummary of(Deployment d, int contextTokens) {
        CostModel cost = d.engine().hostTime().over(new RooflineCostModel(d));
        List<Integer> batches = new ArrayList<>();
        List<Double> decodeMs = new ArrayList<>();
        for (int b = 1; b <= d.maxNumSeqs(); b *= 2) {
            batches.add(b);
            BatchShape decode = new BatchShape();
            for (int i = 0; i < b; i++) {
                decode.addDecode(contextTokens);
            }
            decodeMs.add(cost.stepNanos(decode) / 1e6);
        }
        List<Integer> prompts = new ArrayList<>();
        List<Double> prefillMs = new ArrayList<>();
        for (int len = 128; len <= Math.min(d.maxNumBatchedTokens(), 16_384); len *= 2) {
            prompts.add(len);
            prefillMs.add(cost.stepNanos(new BatchShape().addPrefill(len, 0, true).addNewRequests(1)) / 1e6);
        }
        KvCapacity kv = KvCapacity.of(d);
        return new EngineSummary(contextTokens, batches, decodeMs, prompts, prefillMs, kv.tokens(),
                (int) (kv.tokens() / d.blockSize()), (double) kv.tokens() / contextTokens);
    }

    /** Decode tokens per second at each batch: the batch over its step time. */
    @JsonProperty("decode_tokens_per_s")
    List<Double> decodeTokensPerS() {
        List<Double> tokensPerS = new ArrayList<>();
        for (int i = 0; i < decodeBatches.size(); i++) {
            tokensPerS.add(decodeBatches.get(i) * 1e3 / decodeStepMs.get(i));
        }
        return tokensPerS;
    }
}
