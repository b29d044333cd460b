package dev.infersim.workload;

import dev.infersim.workload.length.LengthDistribution;
import java.util.Locale;

/**
 * One kind of request in a synthetic workload (chat, RAG, code...): how often it occurs and the shape of its
 * requests. A prompt is {@code prefixTokens} shared tokens (one of {@code prefixGroups} distinct prefixes, picked
 * uniformly) followed by {@code inputTokens} request-specific tokens, as vLLM's random dataset builds
 * {@code prefix + input} with {@code --random-prefix-len}.
 *
 * @param name         class name, reported on each request
 * @param weight       relative frequency, > 0 (weights need not sum to 1)
 * @param inputTokens  length of the request-specific part of the prompt
 * @param maxTokens    the request's {@code max_tokens}, >= 1
 * @param eosPosition  EOS position for this class, or null to use the workload's EOS model
 * @param prefixTokens length of the shared prefix, >= 0
 * @param prefixGroups number of distinct shared prefixes, >= 1 when prefixTokens > 0
 * @param loraAdapters the LoRA adapters the class's requests run on, or null for the base model
 */
public record RequestClass(String name, double weight, LengthDistribution inputTokens, LengthDistribution maxTokens,
                           LengthDistribution eosPosition, int prefixTokens, int prefixGroups, LoraMix loraAdapters) {

    /** A class on the base model. */
    public RequestClass(String name, double weight, LengthDistribution inputTokens, LengthDistribution maxTokens,
                        LengthDistribution eosPosition, int prefixTokens, int prefixGroups) {
        this(name, weight, inputTokens, maxTokens, eosPosition, prefixTokens, prefixGroups, null);
    }

    public RequestClass {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("request class name must not be blank");
        }
        if (!(weight > 0) || Double.isInfinite(weight)) {
            throw new IllegalArgumentException("class '" + name + "': weight must be finite and > 0, got " + weight);
        }
        if (inputTokens == null || maxTokens == null) {
            throw new IllegalArgumentException("class '" + name + "': input and output lengths are required");
        }
        if (maxTokens.min() < 1) {
            throw new IllegalArgumentException("class '" + name + "': max_tokens must be >= 1, but its distribution "
                    + "reaches " + maxTokens.min());
        }
        if (prefixTokens < 0) {
            throw new IllegalArgumentException("class '" + name + "': prefix tokens must be >= 0, got " + prefixTokens);
        }
        if (prefixTokens > 0 && prefixGroups < 1) {
            throw new IllegalArgumentException("class '" + name + "': a shared prefix needs >= 1 group, got "
                    + prefixGroups);
        }
        if (prefixTokens == 0) {
            prefixGroups = 0;
        }
        if (inputTokens.max() == Integer.MAX_VALUE) {
            // an open tail (log-normal without max, geometric) would reach past the cap now and then, mid-run
            throw new IllegalArgumentException("class '" + name + "': input_tokens is unbounded; give it a max so "
                    + "prompts stay within infersim's cap of " + String.format(Locale.ROOT, "%,d",
                    WorkloadRequest.MAX_PROMPT_TOKENS) + " tokens");
        }
        WorkloadRequest.checkPromptCap((long) prefixTokens + inputTokens.max(), "class '" + name
                + "': prefix_tokens + the longest input_tokens");
        if ((long) prefixTokens + inputTokens.min() < 1) {
            throw new IllegalArgumentException("class '" + name + "': prompts could be empty (prefix " + prefixTokens
                    + " + shortest input " + inputTokens.min() + " tokens)");
        }
    }

    /** A class without a shared prefix. */
    public static RequestClass unshared(String name, double weight, LengthDistribution inputTokens,
                                        LengthDistribution maxTokens) {
        return new RequestClass(name, weight, inputTokens, maxTokens, null, 0, 0);
    }

    /** Mean prompt length in tokens, prefix included. */
    public double meanPromptTokens() {
        return prefixTokens + inputTokens.mean();
    }
}
