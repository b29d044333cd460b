package dev.infersim.workload;

import dev.infersim.workload.length.OutputLength;
import dev.infersim.common.SplitMix64;

/**
 * vLLM's {@code prefix_repetition} dataset (vllm/benchmarks/datasets.py, PrefixRepetitionRandomDataset), for
 * prefix-cache studies: G distinct random prefixes of P tokens; each prompt is one prefix followed by S random
 * tokens; every request asks for O output tokens. As in vLLM a run of N prompts has G * floor(N / G) requests,
 * N / G per prefix. Each request says whether it is the first of its prefix in stream order
 * ({@link WorkloadRequest#firstOfPrefixGroup()}): the cold one, which no cache can have seen.
 */
public final class PrefixRepetitionDataset implements Dataset {

    private final int prefixTokens;
    private final int suffixTokens;
    private final int numPrefixes;
    private final int maxTokens;
    private final PrefixOrder order;
    private final OutputLength outputLength;

    /**
     * @param prefixTokens P, {@code --prefix-repetition-prefix-len}, >= 1
     * @param suffixTokens S, {@code --prefix-repetition-suffix-len}, >= 0
     * @param numPrefixes  G, {@code --prefix-repetition-num-prefixes}, >= 1
     * @param maxTokens    O, {@code --prefix-repetition-output-len}, >= 1
     * @param order        how requests visit the prefixes; vLLM shuffles
     * @param outputLength the EOS rule
     */
    public PrefixRepetitionDataset(int prefixTokens, int suffixTokens, int numPrefixes, int maxTokens,
                                   PrefixOrder order, OutputLength outputLength) {
        if (prefixTokens < 1) {
            throw new IllegalArgumentException("prefix-repetition prefix length must be >= 1 token, got " + prefixTokens);
        }
        if (suffixTokens < 0) {
            throw new IllegalArgumentException("prefix-repetition suffix length must be >= 0 tokens, got " + suffixTokens);
        }
        if (numPrefixes < 1) {
            throw new IllegalArgumentException("prefix-repetition needs >= 1 prefix, got " + numPrefixes);
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("prefix-repetition output length must be >= 1 token, got " + maxTokens);
        }
        WorkloadRequest.checkPromptCap((long) prefixTokens + suffixTokens,
                "--prefix-repetition-prefix-len + --prefix-repetition-suffix-len");
        this.prefixTokens = prefixTokens;
        this.suffixTokens = suffixTokens;
        this.numPrefixes = numPrefixes;
        this.maxTokens = maxTokens;
        this.order = order;
        this.outputLength = outputLength;
    }

    @Override
    public String name() {
        return "prefix_repetition";
    }

    @Override
    public long requestCount(long numPrompts) {
        if (numPrompts < numPrefixes) {
            throw new IllegalArgumentException("prefix_repetition needs num-prompts (" + numPrompts
                    + ") >= the number of prefixes (" + numPrefixes + ")");
        }
        return numPrompts / numPrefixes * numPrefixes;
    }

    /**
     * The share of requests whose prefix was already sent by an earlier request: 1 - G / requests, exactly for the
     * shuffle and round-robin orders (every prefix is used); a lower bound for the random order.
     */
    public double warmFraction(long numPrompts) {
        return 1.0 - (double) numPrefixes / requestCount(numPrompts);
    }

    @Override
    public Cursor cursor(long seed, long requests) {
        long contentBase = SplitMix64.valueAt(seed, 0);
        PrefixGroups prefixes = new PrefixGroups(SplitMix64.valueAt(seed, 1));
        SplitMix64 orderRng = new SplitMix64(SplitMix64.valueAt(seed, 2));
        SplitMix64 rng = new SplitMix64(0);
        GroupShuffle shuffle = order == PrefixOrder.SHUFFLE ? new GroupShuffle(numPrefixes, requests / numPrefixes) : null;
        return (index, arrivalNanos) -> {
            int group = switch (order) {
                case SHUFFLE -> shuffle.next(orderRng);
                case ROUND_ROBIN -> (int) (index % numPrefixes);
                case RANDOM -> orderRng.nextInt(numPrefixes);
            };
            rng.reseed(SplitMix64.valueAt(contentBase, index));
            int output = outputLength.outputTokens(maxTokens, rng);
            return new WorkloadRequest(index, arrivalNanos, prefixTokens + suffixTokens, prefixTokens, group,
                    maxTokens, output, rng.nextLong(), prefixes.seedOf(group), prefixes.markFirst(group),
                    "prefix_repetition", null);
        };
    }

    /**
     * Draws groups without replacement from a multiset with {@code perGroup} copies of each group, which yields a
     * uniformly random shuffle one element at a time. A Fenwick tree over the remaining counts finds the k-th
     * remaining element in O(log G) (Fenwick, "A new data structure for cumulative frequency tables", 1994).
     */
    static final class GroupShuffle {

        private final long[] tree;
        private final int groups;
        private long remaining;

        GroupShuffle(int groups, long perGroup) {
            this.groups = groups;
            this.tree = new long[groups + 1];
            for (int g = 1; g <= groups; g++) {
                tree[g] += perGroup;
                int parent = g + (g & -g);
                if (parent <= groups) {
                    tree[parent] += tree[g];
                }
            }
            this.remaining = perGroup * groups;
        }

        int next(SplitMix64 rng) {
            if (remaining == 0) {
                throw new IllegalStateException("the shuffled prefix order is exhausted");
            }
            long k = rng.nextLong(remaining);
            int pos = 0;
            for (int step = Integer.highestOneBit(groups); step > 0; step >>= 1) {
                int probe = pos + step;
                if (probe <= groups && tree[probe] <= k) {
                    pos = probe;
                    k -= tree[probe];
                }
            }
            for (int i = pos + 1; i <= groups; i += i & -i) {
                tree[i]--;
            }
            remaining--;
            return pos;
        }
    }
}
