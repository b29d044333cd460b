package dev.infersim.cli.options;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.ConfigException;
import dev.infersim.result.ResultJson;
import dev.infersim.workload.PrefixOrder;
import dev.infersim.workload.arrival.RampStrategy;
import dev.infersim.workload.WorkloadProfile;
import dev.infersim.workload.WorkloadProfiles;
import dev.infersim.workload.WorkloadSpec;
import dev.infersim.workload.WorkloadSpecBuilder;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The workload flags of {@code vllm bench serve} (dataset, lengths, seed, arrivals, concurrency), building the same
 * {@link WorkloadSpec} the simulator replays: {@code bench} and {@code simulate} given the same flags and seed send
 * the very same requests. The load flags (rate, concurrency) are separate so a sweep can vary them.
 */
@OptionGroup.In(OptionGroup.WORKLOAD)
public final class WorkloadOptions {

    /** Null when not given: random, or workload with --workload; an explicit other name with --workload is an error. */
    @Option(names = "--dataset-name",
            description = "random, prefix_repetition, sharegpt, trace or workload (default: random, or workload with --workload).")
    String datasetName;

    @Option(names = "--dataset-path", description = "ShareGPT JSON or trace JSONL file.")
    Path datasetPath;

    @Option(names = "--workload", paramLabel = "NAME|FILE",
            description = "Workload profile, bundled or a YAML file; implies --dataset-name workload. Bundled:%n${sys:"
                    + BundledNames.WORKLOADS + "}")
    String workloadProfile;

    @Option(names = "--num-prompts", description = "Requests to send, 1 to " + OptionLimits.MAX_PROMPTS
            + " (default: 1000, or the profile's).")
    Long numPrompts;

    @Option(names = "--random-input-len", defaultValue = "1024", description = "Prompt tokens after the prefix, at most "
            + OptionLimits.MAX_TOKENS + " (default: ${DEFAULT-VALUE}).")
    int randomInputLen;

    @Option(names = "--random-output-len", defaultValue = "128", description = "max_tokens per request, at most "
            + OptionLimits.MAX_TOKENS + " (default: ${DEFAULT-VALUE}).")
    int randomOutputLen;

    @Option(names = "--random-range-ratio", defaultValue = "0",
            description = "Lengths uniform in [len*(1-r), len*(1+r)] (default: ${DEFAULT-VALUE}).")
    double randomRangeRatio;

    @Option(names = "--random-prefix-len", defaultValue = "0", description = "Shared prefix tokens before every prompt (default: ${DEFAULT-VALUE}).")
    int randomPrefixLen;

    @Option(names = "--prefix-repetition-prefix-len", defaultValue = "256", description = "Prefix tokens (default: ${DEFAULT-VALUE}).")
    int prefixRepetitionPrefixLen;

    @Option(names = "--prefix-repetition-suffix-len", defaultValue = "256", description = "Tokens after the prefix (default: ${DEFAULT-VALUE}).")
    int prefixRepetitionSuffixLen;

    @Option(names = "--prefix-repetition-num-prefixes", defaultValue = "10", description = "Distinct prefixes (default: ${DEFAULT-VALUE}).")
    int prefixRepetitionNumPrefixes;

    @Option(names = "--prefix-repetition-output-len", defaultValue = "128", description = "max_tokens (default: ${DEFAULT-VALUE}).")
    int prefixRepetitionOutputLen;

    @Option(names = "--prefix-repetition-order", defaultValue = "shuffle",
            description = "shuffle (vLLM), round-robin or random (default: ${DEFAULT-VALUE}).")
    String prefixRepetitionOrder;

    @Option(names = "--sharegpt-output-len", defaultValue = "0", description = "Override reply lengths; 0 = the dataset's (default: 0).")
    int sharegptOutputLen;

    @Option(names = "--burstiness", description = "Gamma shape of inter-arrival gaps; 1 = Poisson (default: 1).")
    Double burstiness;

    @Option(names = "--ramp-up-strategy", description = "linear or exponential (needs --ramp-up-start-rps and --ramp-up-end-rps).")
    public String rampUpStrategy;

    @Option(names = "--ramp-up-start-rps", description = "Ramp start rate, req/s, at most " + OptionLimits.MAX_RATE + ".")
    Double rampUpStartRps;

    @Option(names = "--ramp-up-end-rps", description = "Ramp end rate, req/s, at most " + OptionLimits.MAX_RATE + ".")
    Double rampUpEndRps;

    @Option(names = "--seed", defaultValue = "0", description = "Workload seed (default: ${DEFAULT-VALUE}).")
    public long seed;

    @Option(names = "--ignore-eos", description = "Send ignore_eos: every request generates exactly its max_tokens.")
    public boolean ignoreEos;

    @Option(names = "--eos-mean-tokens",
            description = "Without --ignore-eos: max_tokens is drawn as a geometric EOS position with this mean, clipped to the "
                    + "output length (default: every request asks for its full output length).")
    public Double eosMeanTokens;

    /** True for {@code --dataset-name trace}, whose arrival times come from the file rather than a rate. */
    public boolean replaysTrace() {
        return workloadProfile == null && datasetName != null && WorkloadSpec.TRACE.equalsIgnoreCase(datasetName.trim());
    }

    /**
     * The spec at {@code --request-rate} ({@code rateFlag}); without that flag at {@code fallbackRate}, unless the
     * arrivals are given otherwise: by a trace's timestamps, a ramp, or a --workload profile's own rate.
     */
    public WorkloadSpec specAtRateOr(String rateFlag, double fallbackRate, Integer maxConcurrency, long warmups) {
        if (rateFlag != null) {
            return spec(parseRate("--request-rate", rateFlag), maxConcurrency, warmups);
        }
        boolean arrivalsGiven = replaysTrace() || rampUpStrategy != null
                || workloadProfile != null && parsed("--workload", () -> profileSetsRate(workloadProfile));
        return spec(arrivalsGiven ? null : fallbackRate, maxConcurrency, warmups);
    }

    private static boolean profileSetsRate(String profile) {
        WorkloadProfile.Load load = WorkloadProfiles.load(profile).load();
        return load != null && (load.requestRate() != null || load.rampUpStrategy() != null);
    }

    /**
     * The spec at a given load.
     *
     * @param requestRatePerS arrival rate, or null for the default (inf, or the profile's own load)
     * @param maxConcurrency  cap on requests in flight, or null for none
     * @param warmups         unmeasured requests sent first, on top of --num-prompts as in vLLM
     */
    public WorkloadSpec spec(Double requestRatePerS, Integer maxConcurrency, long warmups) {
        return spec(requestRatePerS, maxConcurrency, warmups, seed);
    }

    /** The spec at a given load with another seed than --seed (a sweep's later points: new prompts at each load). */
    public WorkloadSpec spec(Double requestRatePerS, Integer maxConcurrency, long warmups, long seed) {
        return spec(requestRatePerS, maxConcurrency, warmups, seed, 0);
    }

    /**
     * The spec of a direct baseline beside a run through a gateway to {@code replicas} replicas: the same workload and
     * seed with a {@code replicas}-th of the load (rate or concurrency) and of the measured prompts, so that one
     * replica sees what it saw behind the gateway, for as long.
     */
    public WorkloadSpec shareOf(WorkloadSpec whole, int replicas, long warmups) {
        double rate = whole.load().requestRatePerS();
        int cap = whole.load().maxConcurrency();
        long measured = whole.numPrompts() - warmups;
        return spec(Double.isFinite(rate) ? rate / replicas : rate, cap == 0 ? null : Math.max(1, cap / replicas),
                warmups, seed, Math.max(1, (measured + replicas - 1) / replicas));
    }

    /** @param measuredPrompts the measured prompts instead of --num-prompts, or 0 for --num-prompts */
    private WorkloadSpec spec(Double requestRatePerS, Integer maxConcurrency, long warmups, long seed,
                              long measuredPrompts) {
        WorkloadSpecBuilder b = WorkloadSpec.builder()
                .seed(seed)
                .ignoreEos(ignoreEos)
                .randomInputLen(randomInputLen).randomOutputLen(randomOutputLen).randomRangeRatio(randomRangeRatio)
                .randomPrefixLen(randomPrefixLen)
                .prefixRepetitionPrefixLen(prefixRepetitionPrefixLen).prefixRepetitionSuffixLen(prefixRepetitionSuffixLen)
                .prefixRepetitionNumPrefixes(prefixRepetitionNumPrefixes).prefixRepetitionOutputLen(prefixRepetitionOutputLen)
                .sharegptOutputLen(sharegptOutputLen)
                .datasetPath(datasetPath);
        try {
            b.prefixRepetitionOrder(parsed("--prefix-repetition-order", () -> PrefixOrder.parse(prefixRepetitionOrder)));
            ConfigException.check(rampUpStrategy != null || rampUpStartRps == null && rampUpEndRps == null,
                    "--ramp-up-start-rps and --ramp-up-end-rps need --ramp-up-strategy");
            if (rampUpStrategy != null) {
                ConfigException.check(rampUpStartRps != null && rampUpEndRps != null,
                        "--ramp-up-strategy needs --ramp-up-start-rps and --ramp-up-end-rps");
                b.rampUp(parsed("--ramp-up-strategy", () -> RampStrategy.parse(rampUpStrategy)), rampUpStartRps, rampUpEndRps);
            }
            if (workloadProfile != null) {
                b.workloadProfile(workloadProfile);
            }
            if (datasetName != null) {
                b.datasetName(datasetName);
            }
            if (numPrompts != null) {
                b.numPrompts(numPrompts);
            }
            if (requestRatePerS != null) {
                b.requestRate(requestRatePerS);
            }
            if (burstiness != null) {
                b.burstiness(burstiness);
            }
            if (maxConcurrency != null) {
                b.maxConcurrency(maxConcurrency);
            }
            if (eosMeanTokens != null) {
                b.eosMeanTokens(eosMeanTokens);
            }
            if (measuredPrompts > 0) {
                b.numPrompts(measuredPrompts);
            }
            WorkloadSpec spec = b.build();
            return warmups == 0 ? spec : b.numPrompts(spec.numPrompts() + warmups).build();
        } catch (ConfigException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage(), e);
        }
    }

    /** A flag's parsed value; a bad value is a ConfigException naming the flag. */
    private static <T> T parsed(String flag, Supplier<T> parse) {
        try {
            return parse.get();
        } catch (IllegalArgumentException e) {
            throw new ConfigException(flag + ": " + e.getMessage(), e);
        }
    }

    /** The workload settings for a report's metadata. */
    public ObjectNode describe() {
        ObjectNode m = ResultJson.mapper().createObjectNode();
        m.put("dataset_name", workloadProfile != null ? "workload" : datasetName != null ? datasetName : "random");
        m.put("workload", workloadProfile);
        m.put("dataset_path", datasetPath == null ? null : datasetPath.toString());
        m.put("random_input_len", randomInputLen);
        m.put("random_output_len", randomOutputLen);
        m.put("random_range_ratio", randomRangeRatio);
        m.put("random_prefix_len", randomPrefixLen);
        m.put("seed", seed);
        m.put("ignore_eos", ignoreEos);
        m.put("ramp_up_strategy", rampUpStrategy);
        return m;
    }

    /** Parses a rate flag: a positive number or inf. */
    public static double parseRate(String flag, String text) {
        try {
            return WorkloadSpec.parseRate(flag, text);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage(), e);
        }
    }
}
