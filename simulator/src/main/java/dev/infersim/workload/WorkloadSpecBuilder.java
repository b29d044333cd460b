package dev.infersim.workload;

import dev.infersim.workload.length.LengthDistribution;
import dev.infersim.workload.length.GeometricLength;
import dev.infersim.workload.arrival.RateSchedule;
import dev.infersim.workload.arrival.RampUp;
import dev.infersim.workload.arrival.RampStrategy;
import dev.infersim.workload.arrival.LoadPattern;
import dev.infersim.common.ConfigException;
import java.nio.file.Path;

/**
 * Collects {@code vllm bench serve}-style options into a {@link WorkloadSpec}. Options left unset take the workload
 * profile's {@code load}/{@code num_prompts} when a profile is given, else vLLM's defaults. {@link #build()} throws
 * {@link ConfigException} with a one-line message naming the bad option.
 */
public final class WorkloadSpecBuilder {

    private String datasetName;
    private Long numPrompts;
    private long seed;
    private Double requestRatePerS;
    private Double burstiness;
    private Integer maxConcurrency;
    private RampStrategy rampUpStrategy;
    private Double rampUpStartRps;
    private Double rampUpEndRps;
    private long rampUpDurationNanos;
    private boolean normalizeDuration = true;
    private boolean ignoreEos;
    private LengthDistribution eosPosition;
    private int randomInputLen = 1024;
    private int randomOutputLen = 128;
    private double randomRangeRatio;
    private int randomPrefixLen;
    private int prefixRepetitionPrefixLen = 256;
    private int prefixRepetitionSuffixLen = 256;
    private int prefixRepetitionNumPrefixes = 10;
    private int prefixRepetitionOutputLen = 128;
    private PrefixOrder prefixRepetitionOrder = PrefixOrder.SHUFFLE;
    private Path datasetPath;
    private int sharegptOutputLen;
    private WorkloadProfile profile;

    WorkloadSpecBuilder() {
    }

    /** {@code --dataset-name}; defaults to random, or workload when a profile is given. */
    public WorkloadSpecBuilder datasetName(String name) {
        this.datasetName = name;
        return this;
    }

    /** {@code --num-prompts}; default 1000 (or the profile's num_prompts). */
    public WorkloadSpecBuilder numPrompts(long n) {
        this.numPrompts = n;
        return this;
    }

    /** {@code --seed}; default 0. */
    public WorkloadSpecBuilder seed(long seed) {
        this.seed = seed;
        return this;
    }

    /** {@code --request-rate} in requests per second; {@code Double.POSITIVE_INFINITY} (default) sends all at once. */
    public WorkloadSpecBuilder requestRate(double ratePerS) {
        this.requestRatePerS = ratePerS;
        return this;
    }

    /** {@code --burstiness}: gamma shape of the gaps; 1 (default) = Poisson, infinity = evenly spaced. */
    public WorkloadSpecBuilder burstiness(double burstiness) {
        ConfigException.check(burstiness > 0, "--burstiness must be > 0 (or inf), got %s", burstiness);
        this.burstiness = burstiness;
        return this;
    }

    /** {@code --max-concurrency}; 0 = no cap (default). */
    public WorkloadSpecBuilder maxConcurrency(int cap) {
        ConfigException.check(cap >= 0, "--max-concurrency must be >= 0 (0 = no cap), got %d", cap);
        this.maxConcurrency = cap;
        return this;
    }

    /** {@code --ramp-up-strategy --ramp-up-start-rps --ramp-up-end-rps}, over the request count as vLLM. */
    public WorkloadSpecBuilder rampUp(RampStrategy strategy, double startRps, double endRps) {
        this.rampUpStrategy = strategy;
        this.rampUpStartRps = startRps;
        this.rampUpEndRps = endRps;
        return this;
    }

    /** Makes the ramp span {@code durationNanos} of time instead of the request count; 0 restores the count. */
    public WorkloadSpecBuilder rampUpDurationNanos(long durationNanos) {
        this.rampUpDurationNanos = durationNanos;
        return this;
    }

    /** Whether a fixed-rate schedule is scaled so the last request arrives at N / rate (vLLM; default true). */
    public WorkloadSpecBuilder normalizeDuration(boolean normalize) {
        this.normalizeDuration = normalize;
        return this;
    }

    /** {@code --ignore-eos}. */
    public WorkloadSpecBuilder ignoreEos(boolean ignore) {
        this.ignoreEos = ignore;
        return this;
    }

    /** The EOS model: where generation stops on its own before max_tokens; null (default) = never. */
    public WorkloadSpecBuilder eosPosition(LengthDistribution eos) {
        this.eosPosition = eos;
        return this;
    }

    /** Shorthand for a memoryless EOS: geometric positions with the given mean. */
    public WorkloadSpecBuilder eosMeanTokens(double meanTokens) {
        try {
            this.eosPosition = new GeometricLength(meanTokens);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("--eos-mean-tokens: " + e.getMessage(), e);
        }
        return this;
    }

    /** {@code --random-input-len}; default 1024. */
    public WorkloadSpecBuilder randomInputLen(int tokens) {
        this.randomInputLen = tokens;
        return this;
    }

    /** {@code --random-output-len}; default 128. */
    public WorkloadSpecBuilder randomOutputLen(int tokens) {
        this.randomOutputLen = tokens;
        return this;
    }

    /** {@code --random-range-ratio}; default 0. */
    public WorkloadSpecBuilder randomRangeRatio(double ratio) {
        this.randomRangeRatio = ratio;
        return this;
    }

    /** {@code --random-prefix-len}; default 0. */
    public WorkloadSpecBuilder randomPrefixLen(int tokens) {
        this.randomPrefixLen = tokens;
        return this;
    }

    /** {@code --prefix-repetition-prefix-len}; default 256. */
    public WorkloadSpecBuilder prefixRepetitionPrefixLen(int tokens) {
        this.prefixRepetitionPrefixLen = tokens;
        return this;
    }

    /** {@code --prefix-repetition-suffix-len}; default 256. */
    public WorkloadSpecBuilder prefixRepetitionSuffixLen(int tokens) {
        this.prefixRepetitionSuffixLen = tokens;
        return this;
    }

    /** {@code --prefix-repetition-num-prefixes}; default 10. */
    public WorkloadSpecBuilder prefixRepetitionNumPrefixes(int n) {
        this.prefixRepetitionNumPrefixes = n;
        return this;
    }

    /** {@code --prefix-repetition-output-len}; default 128. */
    public WorkloadSpecBuilder prefixRepetitionOutputLen(int tokens) {
        this.prefixRepetitionOutputLen = tokens;
        return this;
    }

    /** Order of prefix visits; default shuffle (vLLM). */
    public WorkloadSpecBuilder prefixRepetitionOrder(PrefixOrder order) {
        this.prefixRepetitionOrder = order;
        return this;
    }

    /** {@code --dataset-path}: the ShareGPT JSON or the trace JSONL. */
    public WorkloadSpecBuilder datasetPath(Path path) {
        this.datasetPath = path;
        return this;
    }

    /** {@code --sharegpt-output-len}; 0 (default) = each reply's own length. */
    public WorkloadSpecBuilder sharegptOutputLen(int tokens) {
        this.sharegptOutputLen = tokens;
        return this;
    }

    /** A workload profile by bundled name ({@code chat}) or YAML path; see {@link WorkloadProfiles#load}. */
    public WorkloadSpecBuilder workloadProfile(String nameOrPath) {
        this.profile = WorkloadProfiles.load(nameOrPath);
        return this;
    }

    /** An already loaded workload profile. */
    public WorkloadSpecBuilder workloadProfile(WorkloadProfile loaded) {
        this.profile = loaded;
        return this;
    }

    /** The spec; a {@link ConfigException} names the bad option. */
    public WorkloadSpec build() {
        try {
            String dataset = datasetName != null ? datasetName : profile != null ? WorkloadSpec.WORKLOAD : WorkloadSpec.RANDOM;
            if (profile != null && !WorkloadSpec.canonicalDatasetName(dataset).equals(WorkloadSpec.WORKLOAD)) {
                throw new IllegalArgumentException("a workload profile needs --dataset-name workload, got " + dataset);
            }
            boolean trace = WorkloadSpec.canonicalDatasetName(dataset).equals(WorkloadSpec.TRACE);
            if (trace && (requestRatePerS != null || burstiness != null || rampUpStrategy != null)) {
                throw new IllegalArgumentException("--dataset-name trace replays the trace's timestamps; "
                        + "drop --request-rate, --burstiness and --ramp-up-*");
            }
            WorkloadProfile.Load fileLoad = profile == null ? null : profile.load();
            long prompts = numPrompts != null ? numPrompts
                    : profile != null && profile.numPrompts() != null ? profile.numPrompts() : 1000;
            return new WorkloadSpec(dataset, prompts, seed, loadPattern(fileLoad), ignoreEos, eosPosition,
                    randomInputLen, randomOutputLen, randomRangeRatio, randomPrefixLen,
                    prefixRepetitionPrefixLen, prefixRepetitionSuffixLen, prefixRepetitionNumPrefixes,
                    prefixRepetitionOutputLen, prefixRepetitionOrder, datasetPath, sharegptOutputLen, profile);
        } catch (IllegalArgumentException e) {
            throw WorkloadSpec.invalid(e);
        }
    }

    private LoadPattern loadPattern(WorkloadProfile.Load fileLoad) {
        // An explicit ramp replaces the file's rate, and an explicit rate replaces the file's ramp.
        double rate = requestRatePerS != null ? requestRatePerS
                : rampUpStrategy == null && fileLoad != null && fileLoad.requestRate() != null
                ? WorkloadSpec.parseRate("request_rate", fileLoad.requestRate()) : Double.POSITIVE_INFINITY;
        double shape = burstiness != null ? burstiness
                : fileLoad != null && fileLoad.burstiness() != null
                ? WorkloadSpec.parseRate("burstiness", fileLoad.burstiness()) : 1.0;
        int cap = maxConcurrency != null ? maxConcurrency
                : fileLoad != null && fileLoad.maxConcurrency() != null ? fileLoad.maxConcurrency() : 0;
        RampUp ramp = null;
        if (rampUpStrategy != null) {
            try {
                ramp = new RampUp(rampUpStrategy, rampUpStartRps, rampUpEndRps, rampUpDurationNanos);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--ramp-up-start-rps/--ramp-up-end-rps: " + e.getMessage(), e);
            }
        } else if (requestRatePerS == null && fileLoad != null) {
            ramp = fileLoad.rampUp();
        }
        if (ramp != null && !Double.isInfinite(rate)) {
            throw new IllegalArgumentException("--ramp-up-strategy sets the rate itself; drop --request-rate (got "
                    + rate + " req/s)");
        }
        // The file's diurnal swing and bursts vary the file's rate; a rate or ramp given as an option replaces them.
        RateSchedule schedule = requestRatePerS == null && rampUpStrategy == null && fileLoad != null
                ? fileLoad.schedule() : null;
        return new LoadPattern(rate, shape, cap, ramp, normalizeDuration, schedule);
    }
}
