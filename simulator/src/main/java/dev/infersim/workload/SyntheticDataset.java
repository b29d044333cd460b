package dev.infersim.workload;

import dev.infersim.workload.length.UniformLength;
import dev.infersim.workload.length.OutputLength;
import dev.infersim.common.SplitMix64;

import java.util.List;

/**
 * Requests drawn from a weighted mix of {@link RequestClass}es: vLLM's {@code random} dataset is the one-class case
 * ({@link #random}); workload profiles mix several. Each request draws from its own stream, seeded from the pass
 * seed and its index, so request i does not depend on how many numbers earlier requests consumed.
 */
public final class SyntheticDataset implements Dataset {

    private final String name;
    private final RequestClass[] classes;
    private final double[] cumulativeWeight;
    private final int[] firstGroup;
    private final OutputLength[] outputLengths;

    /**
     * @param name         dataset name reported by {@link #name()}
     * @param classes      at least one class; prefix groups are numbered class by class, so they never collide
     * @param outputLength the workload's EOS rule; a class's own EOS position overrides the rule's
     */
    public SyntheticDataset(String name, List<RequestClass> classes, OutputLength outputLength) {
        if (classes.isEmpty()) {
            throw new IllegalArgumentException("a synthetic dataset needs at least one request class");
        }
        this.name = name;
        this.classes = classes.toArray(RequestClass[]::new);
        this.cumulativeWeight = new double[this.classes.length];
        this.firstGroup = new int[this.classes.length];
        this.outputLengths = new OutputLength[this.classes.length];
        double total = 0;
        int groups = 0;
        for (int c = 0; c < this.classes.length; c++) {
            RequestClass rc = this.classes[c];
            total += rc.weight();
            cumulativeWeight[c] = total;
            firstGroup[c] = groups;
            groups += rc.prefixGroups();
            outputLengths[c] = outputLength.withEosPosition(rc.eosPosition());
        }
    }

    /**
     * vLLM's {@code random} dataset: input and output lengths uniform over the {@code --random-range-ratio} interval
     * around {@code --random-input-len} and {@code --random-output-len} (output at least 1), and one shared prefix of
     * {@code --random-prefix-len} tokens in front of every prompt; the input length excludes the prefix, as in vLLM
     * (prompt = prefix + input). vLLM also subtracts the tokenizer's special tokens from the input length; infersim
     * has no tokenizer here and generates exactly the input length (a server may add a BOS token).
     */
    public static SyntheticDataset random(int inputLen, int outputLen, double rangeRatio, int prefixLen,
                                          OutputLength outputLength) {
        if (inputLen >= 0 && prefixLen >= 0 && rangeRatio >= 0) {
            WorkloadRequest.checkPromptCap(prefixLen + (long) Math.ceil(inputLen * (1 + rangeRatio)),
                    "--random-prefix-len + --random-input-len" + (rangeRatio > 0 ? " * (1 + --random-range-ratio)" : ""));
        }
        try {
            RequestClass only = new RequestClass("random", 1.0,
                    UniformLength.ofRangeRatio(inputLen, rangeRatio, 0),
                    UniformLength.ofRangeRatio(outputLen, rangeRatio, 1),
                    null, prefixLen, prefixLen > 0 ? 1 : 0);
            return new SyntheticDataset("random", List.of(only), outputLength);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--random-input-len/--random-prefix-len: " + e.getMessage(), e);
        }
    }

    @Override
    public String name() {
        return name;
    }

    /** The classes, in declaration order. */
    public List<RequestClass> classes() {
        return List.of(classes);
    }

    /** Mean prompt length over the mix, in tokens. */
    public double meanPromptTokens() {
        double sum = 0;
        for (RequestClass rc : classes) {
            sum += rc.weight() * rc.meanPromptTokens();
        }
        return sum / cumulativeWeight[classes.length - 1];
    }

    @Override
    public Cursor cursor(long seed, long requests) {
        long contentBase = SplitMix64.valueAt(seed, 0);
        PrefixGroups prefixes = new PrefixGroups(SplitMix64.valueAt(seed, 1));
        SplitMix64 rng = new SplitMix64(0);
        return (index, arrivalNanos) -> {
            rng.reseed(SplitMix64.valueAt(contentBase, index));
            int c = pickClass(rng.nextDouble() * cumulativeWeight[classes.length - 1]);
            RequestClass rc = classes[c];
            int input = rc.inputTokens().sample(rng);
            int maxTokens = rc.maxTokens().sample(rng);
            int output = outputLengths[c].outputTokens(maxTokens, rng);
            long contentSeed = rng.nextLong();
            String lora = rc.loraAdapters() == null ? null : rc.loraAdapters().pick(contentSeed);
            if (rc.prefixTokens() == 0) {
                return new WorkloadRequest(index, arrivalNanos, input, 0, -1, maxTokens, output, contentSeed, 0L,
                        false, rc.name(), null, lora);
            }
            int group = firstGroup[c] + (rc.prefixGroups() == 1 ? 0 : rng.nextInt(rc.prefixGroups()));
            return new WorkloadRequest(index, arrivalNanos, rc.prefixTokens() + input, rc.prefixTokens(), group,
                    maxTokens, output, contentSeed, prefixes.seedOf(group), prefixes.markFirst(group), rc.name(), null, lora);
        };
    }

    private int pickClass(double u) {
        for (int c = 0; c < cumulativeWeight.length - 1; c++) {
            if (u < cumulativeWeight[c]) {
                return c;
            }
        }
        return cumulativeWeight.length - 1;
    }
}
