package dev.infersim.prediction;

import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The lengths of a workload that closed-form models need, measured on the very requests the simulator and the
 * benchmark client would send (the first {@code limit} of the seeded stream), so every dataset works alike: each
 * request's prompt, output and reusable shared prefix, and the moments derived from them.
 */
public final class WorkloadMoments {
    private final int[] promptTokens;
    private final int[] outputTokens;
    private final int[] warmPrefixTokens;
    private final long distinctPrefixTokens;
    private final int prefixGroups;

    private WorkloadMoments(int[] promptTokens, int[] outputTokens, int[] warmPrefixTokens, long distinctPrefixTokens,
                            int prefixGroups) {
        this.promptTokens = promptTokens;
        this.outputTokens = outputTokens;
        this.warmPrefixTokens = warmPrefixTokens;
        this.distinctPrefixTokens = distinctPrefixTokens;
        this.prefixGroups = prefixGroups;
    }

    public static WorkloadMoments of(Workload workload, long limit) {
        int n = (int) Math.min(limit, Math.min(workload.size(), Integer.MAX_VALUE - 8));
        int[] prompt = new int[n];
        int[] output = new int[n];
        int[] warm = new int[n];
        Map<Integer, Integer> groups = new HashMap<>();
        int i = 0;
        for (WorkloadRequest r : workload) {
            if (i == n) {
                break;
            }
            prompt[i] = r.promptTokens();
            output[i] = r.outputTokens();
            if (r.hasSharedPrefix()) {
                // a group seen before in the stream has its prefix in the cache unless evicted
                warm[i] = groups.containsKey(r.prefixGroup()) ? r.prefixTokens() : 0;
                groups.putIfAbsent(r.prefixGroup(), r.prefixTokens());
            }
            i++;
        }
        long distinct = groups.values().stream().mapToLong(Integer::longValue).sum();
        return new WorkloadMoments(i == n ? prompt : Arrays.copyOf(prompt, i),
                i == n ? output : Arrays.copyOf(output, i), i == n ? warm : Arrays.copyOf(warm, i),
                distinct, groups.size());
    }

    int samples() {
        return promptTokens.length;
    }

    int promptTokens(int i) {
        return promptTokens[i];
    }

    int outputTokens(int i) {
        return outputTokens[i];
    }

    /** The shared prefix of request i that an earlier request of its group put in the cache; 0 for cold or none. */
    int warmPrefixTokens(int i) {
        return warmPrefixTokens[i];
    }

    /** Tokens of all distinct shared prefixes: what the cache must keep for every warm request to hit. */
    long distinctPrefixTokens() {
        return distinctPrefixTokens;
    }

    int prefixGroups() {
        return prefixGroups;
    }

    /** P. */
    public double meanPromptTokens() {
        return mean(promptTokens);
    }

    /** E[L], after EOS draws and max_tokens. */
    public double meanOutputTokens() {
        return mean(outputTokens);
    }

    /** The longest prompt, which the engine rejects if it leaves no room in the context. */
    public int maxPromptTokens() {
        int max = 0;
        for (int p : promptTokens) {
            max = Math.max(max, p);
        }
        return max;
    }

    /**
     * Mean context of a decoding sequence, averaged over decode iterations rather than requests: long outputs spend
     * more iterations decoding, so the average is length-biased, P + (E[L^2] + E[L]) / (2 E[L]).
     */
    double meanDecodeContextTokens() {
        double squared = 0;
        for (int l : outputTokens) {
            squared += (double) l * l;
        }
        double meanOutput = meanOutputTokens();
        return meanPromptTokens() + (squared / outputTokens.length + meanOutput) / (2 * meanOutput);
    }

    private static double mean(int[] values) {
        double sum = 0;
        for (int v : values) {
            sum += v;
        }
        return sum / values.length;
    }
}
