package dev.infersim.workload;

import dev.infersim.common.SplitMix64;

import java.util.Locale;

/**
 * One request of a workload, as both the simulator and the benchmark client replay it.
 *
 * <p>Token ids are not stored: {@link #promptTokenIds(int)} derives them on demand from two seeds, so a stream of a
 * million requests costs a few dozen bytes each. The first {@code prefixTokens} ids depend only on
 * {@code prefixSeed}, which the generator derives from the workload seed and {@code prefixGroup}; every request of a
 * group therefore starts with the same ids (what a prefix cache keys on). The remaining ids depend on
 * {@code contentSeed}, unique per request.
 *
 * @param index              position in the stream, from 0
 * @param arrivalNanos       open-loop send time relative to the start of the run; 0 for every request of a closed loop
 * @param promptTokens       prompt length in tokens, shared prefix included
 * @param prefixTokens       length of the shared prefix at the start of the prompt; 0 when there is none
 * @param prefixGroup        id of the shared prefix, unique across the whole workload; -1 when there is none
 * @param maxTokens          the request's {@code max_tokens}
 * @param outputTokens       tokens the model generates: the EOS position drawn for the request, clipped to
 *                           {@code maxTokens}; equal to {@code maxTokens} with {@code --ignore-eos}
 * @param contentSeed        seed of the non-prefix token ids
 * @param prefixSeed         seed of the prefix token ids; 0 when there is no prefix
 * @param firstOfPrefixGroup true for the first request of its prefix group in stream order (the cold one: nothing
 *                           can have cached that prefix before it); false for later ones and when there is no prefix
 * @param requestClass       name of the class the request belongs to (the workload profile's class, or the dataset
 *                           name for single-class datasets such as {@code random})
 * @param promptText         the prompt text for datasets that carry real text (sharegpt), else null; clients without
 *                           text render {@link #promptTokenIds(int)} with their own tokenizer
 * @param lora               the LoRA adapter the request runs on (the model name it sends), or null for the base model
 */
public record WorkloadRequest(long index, long arrivalNanos, int promptTokens, int prefixTokens, int prefixGroup,
                              int maxTokens, int outputTokens, long contentSeed, long prefixSeed,
                              boolean firstOfPrefixGroup, String requestClass, String promptText, String lora) {

    /** A request on the base model. */
    public WorkloadRequest(long index, long arrivalNanos, int promptTokens, int prefixTokens, int prefixGroup,
                           int maxTokens, int outputTokens, long contentSeed, long prefixSeed,
                           boolean firstOfPrefixGroup, String requestClass, String promptText) {
        this(index, arrivalNanos, promptTokens, prefixTokens, prefixGroup, maxTokens, outputTokens, contentSeed, prefixSeed,
                firstOfPrefixGroup, requestClass, promptText, null);
    }

    /**
     * The longest prompt any dataset may produce: 16,777,216 tokens, far above any model's context window (the
     * longest are about 10M), so no real workload meets it, while prefix + input stays far from int overflow and a
     * rendered prompt fits a Java array. Datasets check it where lengths enter, naming the flag or file.
     */
    public static final int MAX_PROMPT_TOKENS = 1 << 24;

    public WorkloadRequest {
        if (index < 0) {
            throw new IllegalArgumentException("index must be >= 0, got " + index);
        }
        if (arrivalNanos < 0) {
            throw new IllegalArgumentException("arrivalNanos must be >= 0, got " + arrivalNanos);
        }
        if (promptTokens < 1) {
            throw new IllegalArgumentException("promptTokens must be >= 1, got " + promptTokens);
        }
        if (prefixTokens < 0 || prefixTokens > promptTokens) {
            throw new IllegalArgumentException(
                    "prefixTokens must be in [0, promptTokens=" + promptTokens + "], got " + prefixTokens);
        }
        if ((prefixGroup < 0) != (prefixTokens == 0) || prefixGroup < -1) {
            throw new IllegalArgumentException("prefixGroup must be -1 exactly when prefixTokens is 0, got group "
                    + prefixGroup + " with " + prefixTokens + " prefix tokens");
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("maxTokens must be >= 1, got " + maxTokens);
        }
        if (outputTokens < 1 || outputTokens > maxTokens) {
            throw new IllegalArgumentException(
                    "outputTokens must be in [1, maxTokens=" + maxTokens + "], got " + outputTokens);
        }
        if (firstOfPrefixGroup && prefixGroup < 0) {
            throw new IllegalArgumentException("firstOfPrefixGroup is set on a request without a prefix group");
        }
        if (requestClass == null) {
            throw new IllegalArgumentException("requestClass must not be null");
        }
    }

    /**
     * Rejects prompts longer than {@link #MAX_PROMPT_TOKENS}.
     *
     * @param tokens the longest prompt a source can produce, computed in long so a sum cannot wrap
     * @param what   what reaches that length, as the message should name it (a flag or a file and line)
     */
    static void checkPromptCap(long tokens, String what) {
        if (tokens > MAX_PROMPT_TOKENS) {
            throw new IllegalArgumentException(what + ": " + tokens + " prompt tokens exceed infersim's cap of "
                    + String.format(Locale.ROOT, "%,d", MAX_PROMPT_TOKENS) + " (far above any model's context window)");
        }
    }

    /** Whether the prompt starts with a prefix shared with other requests. */
    public boolean hasSharedPrefix() {
        return prefixGroup >= 0;
    }

    /** The prompt's token ids in {@code [0, vocabSize)}; see {@link #fillPromptTokenIds(int[], int)}. */
    public int[] promptTokenIds(int vocabSize) {
        int[] ids = new int[promptTokens];
        fillPromptTokenIds(ids, vocabSize);
        return ids;
    }

    /**
     * Writes the prompt's {@code promptTokens} token ids into {@code dst[0..promptTokens)}, drawn uniformly from
     * {@code [0, vocabSize)}; allocates nothing. Pass the size of the tokenizer's ordinary vocabulary (special tokens
     * usually sit above it) so that rendered prompts contain no control tokens.
     *
     * @throws IllegalArgumentException if {@code dst} is shorter than {@code promptTokens} or vocabSize is below 1
     */
    public void fillPromptTokenIds(int[] dst, int vocabSize) {
        if (vocabSize < 1) {
            throw new IllegalArgumentException("vocabSize must be >= 1, got " + vocabSize);
        }
        if (dst.length < promptTokens) {
            throw new IllegalArgumentException(
                    "dst holds " + dst.length + " ids but the prompt has " + promptTokens + " tokens");
        }
        fillIds(dst, 0, prefixTokens, prefixSeed, vocabSize);
        fillIds(dst, prefixTokens, promptTokens, contentSeed, vocabSize);
    }

    /**
     * Writes the first {@code min(count, promptTokens)} prompt token ids into {@code dst}, the same ids
     * {@link #fillPromptTokenIds} gives there, without computing the rest; what a router hashing a prompt's leading
     * blocks reads. Allocates nothing.
     *
     * @return how many ids were written
     */
    public int fillLeadingTokenIds(int[] dst, int count, int vocabSize) {
        if (vocabSize < 1) {
            throw new IllegalArgumentException("vocabSize must be >= 1, got " + vocabSize);
        }
        int n = Math.min(count, promptTokens);
        if (dst.length < n) {
            throw new IllegalArgumentException("dst holds " + dst.length + " ids but " + n + " are asked for");
        }
        fillIds(dst, 0, Math.min(n, prefixTokens), prefixSeed, vocabSize);
        fillIds(dst, prefixTokens, n, contentSeed, vocabSize);
        return n;
    }

    /**
     * Token k of a seed's sequence is one 32-bit half of SplitMix64 value k/2 (high half for even k), reduced to the
     * vocabulary by multiply-shift; one 64-bit mix thus yields two ids.
     */
    private static void fillIds(int[] dst, int from, int to, long seed, int vocabSize) {
        int k = from;
        if (k < to && (k & 1) == 1) {
            dst[k] = lowHalfId(SplitMix64.valueAt(seed, k >>> 1), vocabSize);
            k++;
        }
        for (; k + 1 < to; k += 2) {
            long bits = SplitMix64.valueAt(seed, k >>> 1);
            dst[k] = SplitMix64.reduce(bits, vocabSize);
            dst[k + 1] = lowHalfId(bits, vocabSize);
        }
        if (k < to) {
            dst[k] = SplitMix64.reduce(SplitMix64.valueAt(seed, k >>> 1), vocabSize);
        }
    }

    private static int lowHalfId(long bits, int vocabSize) {
        return SplitMix64.reduce(bits << 32, vocabSize);
    }
}
