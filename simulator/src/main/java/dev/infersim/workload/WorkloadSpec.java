package dev.infersim.workload;

import dev.infersim.workload.length.LengthDistribution;
import dev.infersim.workload.length.OutputLength;
import dev.infersim.workload.arrival.LoadPattern;
import dev.infersim.common.ConfigException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Everything that determines a request stream, in the terms of {@code vllm bench serve}'s options. Build it with
 * {@link #builder()} (defaults are vLLM's), then {@link Workload#open(WorkloadSpec)} streams the requests. The same
 * spec gives the same stream in the simulator and in the benchmark client.
 *
 * @param datasetName                 {@code --dataset-name}: random, sharegpt, prefix_repetition, trace or workload
 * @param numPrompts                  {@code --num-prompts}
 * @param seed                        {@code --seed}
 * @param load                        arrivals and concurrency cap
 * @param ignoreEos                   {@code --ignore-eos}: every request generates exactly its max_tokens
 * @param eosPosition                 EOS model: where the model would stop on its own, or null for never before
 *                                    max_tokens (workload profile classes may override it)
 * @param randomInputLen              {@code --random-input-len}, tokens after the prefix
 * @param randomOutputLen             {@code --random-output-len}
 * @param randomRangeRatio            {@code --random-range-ratio}, in [0, 1)
 * @param randomPrefixLen             {@code --random-prefix-len}, one prefix shared by every request
 * @param prefixRepetitionPrefixLen   {@code --prefix-repetition-prefix-len}
 * @param prefixRepetitionSuffixLen   {@code --prefix-repetition-suffix-len}
 * @param prefixRepetitionNumPrefixes {@code --prefix-repetition-num-prefixes}
 * @param prefixRepetitionOutputLen   {@code --prefix-repetition-output-len}
 * @param prefixRepetitionOrder       order in which requests visit the prefixes (vLLM shuffles)
 * @param datasetPath                 {@code --dataset-path} for sharegpt (JSON) and trace (JSONL), else null
 * @param sharegptOutputLen           {@code --sharegpt-output-len}; 0 = the reply's own length
 * @param profile                     the workload profile for dataset {@code workload}, else null
 */
public record WorkloadSpec(String datasetName, long numPrompts, long seed, LoadPattern load, boolean ignoreEos,
                           LengthDistribution eosPosition,
                           int randomInputLen, int randomOutputLen, double randomRangeRatio, int randomPrefixLen,
                           int prefixRepetitionPrefixLen, int prefixRepetitionSuffixLen,
                           int prefixRepetitionNumPrefixes, int prefixRepetitionOutputLen,
                           PrefixOrder prefixRepetitionOrder,
                           Path datasetPath, int sharegptOutputLen, WorkloadProfile profile) {

    public static final String RANDOM = "random";
    public static final String SHAREGPT = "sharegpt";
    public static final String PREFIX_REPETITION = "prefix_repetition";
    public static final String TRACE = "trace";
    public static final String WORKLOAD = "workload";

    public WorkloadSpec {
        datasetName = canonicalDatasetName(datasetName);
        if (numPrompts < 1) {
            throw new IllegalArgumentException("--num-prompts must be >= 1, got " + numPrompts);
        }
        if (load == null) {
            throw new IllegalArgumentException("load pattern must not be null");
        }
        if (randomInputLen < 0 || randomOutputLen < 1 || randomPrefixLen < 0) {
            throw new IllegalArgumentException("random lengths need --random-input-len >= 0, --random-output-len >= 1, "
                    + "--random-prefix-len >= 0; got " + randomInputLen + ", " + randomOutputLen + ", " + randomPrefixLen);
        }
        if (!(randomRangeRatio >= 0 && randomRangeRatio < 1)) {
            throw new IllegalArgumentException("--random-range-ratio must be in [0, 1), got " + randomRangeRatio);
        }
        if (sharegptOutputLen < 0) {
            throw new IllegalArgumentException("--sharegpt-output-len must be >= 0 (0 = from the dataset), got "
                    + sharegptOutputLen);
        }
        if (prefixRepetitionOrder == null) {
            throw new IllegalArgumentException("prefix repetition order must not be null");
        }
        boolean readsFile = datasetName.equals(SHAREGPT) || datasetName.equals(TRACE);
        if (readsFile && datasetPath == null) {
            throw new IllegalArgumentException("--dataset-name " + datasetName + " needs --dataset-path");
        }
        // vLLM refuses a file with the random dataset rather than ignore it; the other generated datasets would ignore it too
        if (!readsFile && datasetPath != null) {
            throw new IllegalArgumentException("--dataset-path " + datasetPath + " is only read by --dataset-name "
                    + "sharegpt or trace, and the dataset is " + datasetName + "; name the dataset the file holds");
        }
        if (datasetName.equals(WORKLOAD) && profile == null) {
            throw new IllegalArgumentException("--dataset-name workload needs a workload profile (--workload)");
        }
    }

    /** A builder with vLLM's defaults: random dataset, 1000 prompts, seed 0, rate inf, 1024 in / 128 out tokens. */
    public static WorkloadSpecBuilder builder() {
        return new WorkloadSpecBuilder();
    }

    /** The same workload with {@code n} requests. */
    public WorkloadSpec withNumPrompts(long n) {
        return new WorkloadSpec(datasetName, n, seed, load, ignoreEos, eosPosition, randomInputLen, randomOutputLen,
                randomRangeRatio, randomPrefixLen, prefixRepetitionPrefixLen, prefixRepetitionSuffixLen,
                prefixRepetitionNumPrefixes, prefixRepetitionOutputLen, prefixRepetitionOrder, datasetPath,
                sharegptOutputLen, profile);
    }

    /** Accepts vLLM's spellings and {@code prefix-repetition}; rejects unknown names listing the known ones. */
    public static String canonicalDatasetName(String name) {
        if (name == null) {
            throw new IllegalArgumentException("--dataset-name must not be empty");
        }
        String canonical = name.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        return switch (canonical) {
            case RANDOM, SHAREGPT, PREFIX_REPETITION, TRACE, WORKLOAD -> canonical;
            default -> throw new IllegalArgumentException("--dataset-name must be one of random, sharegpt, "
                    + "prefix_repetition, trace, workload; got '" + name + "'");
        };
    }

    /** The fastest finite rate (and burstiness) a run takes, per second: faster is all at once, which is {@code inf}. */
    public static final int MAX_RATE_PER_S = 1_000_000;

    /**
     * Parses a rate-like value: a number above 0 and at most {@link #MAX_RATE_PER_S}, or {@code inf}/{@code .inf}/
     * {@code infinity} for infinity; a number too large to be finite ({@code 1e999}) is refused, not read as inf.
     */
    public static double parseRate(String field, String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.equals("inf") || t.equals(".inf") || t.equals("infinity") || t.equals("+inf")) {
            return Double.POSITIVE_INFINITY;
        }
        if (!t.matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)(e[+-]?\\d+)?")) {
            throw new IllegalArgumentException(field + " must be a number or inf, got '" + text + "'");
        }
        double value = Double.parseDouble(t);
        if (!(value > 0)) {
            throw new IllegalArgumentException(field + " must be > 0 or inf, got " + text);
        }
        if (value > MAX_RATE_PER_S) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "%s must be at most %,d (or inf), got %s", field,
                    MAX_RATE_PER_S, text));
        }
        return value;
    }

    /** The EOS rule of this spec. */
    public OutputLength outputLength() {
        return new OutputLength(eosPosition, ignoreEos);
    }

    /** Thrown as a {@link ConfigException} so command lines print it as one line. */
    static ConfigException invalid(IllegalArgumentException e) {
        return new ConfigException(e.getMessage(), e);
    }
}
