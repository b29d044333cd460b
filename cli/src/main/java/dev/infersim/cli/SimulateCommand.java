package dev.infersim.cli;

import dev.infersim.engine.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.KvCapacity;
import dev.infersim.sim.BenchmarkReport;
import dev.infersim.sim.DetailWriter;
import dev.infersim.sim.GoodputSlo;
import dev.infersim.sim.Replica;
import dev.infersim.sim.Router;
import dev.infersim.sim.RunInfo;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.workload.LoadPattern;
import dev.infersim.workload.PrefixOrder;
import dev.infersim.workload.RampStrategy;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import dev.infersim.workload.WorkloadSpecBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * {@code infersim simulate}: runs a {@code vllm bench serve}-style workload against the engine model in virtual time
 * and reports what the benchmark would have measured, in vLLM's console format and result JSON.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Simulate a vllm bench serve run against the engine model in virtual time; prints vLLM's summary "
                + "and writes vLLM's result JSON. With no flags: 1000 random prompts (1024 in / 128 out) at 10 req/s "
                + "on llama-3.1-8b / h100.")
public final class SimulateCommand implements Runnable {

    @Option(names = "--dataset-name", defaultValue = "random",
            description = "random, prefix_repetition, sharegpt, trace or workload (default: ${DEFAULT-VALUE}).")
    String datasetName;

    @Option(names = "--dataset-path", description = "ShareGPT JSON or trace JSONL file.")
    Path datasetPath;

    @Option(names = "--workload", paramLabel = "NAME|FILE",
            description = "Workload profile (chat, code, long-context-qa, summarization, chat-rag-mix, matrix-row-a..f) "
                    + "or YAML file; implies --dataset-name workload.")
    String workloadProfile;

    @Option(names = "--num-prompts", description = "Requests to send (default: 1000, or the profile's).")
    Long numPrompts;

    @Option(names = "--random-input-len", defaultValue = "1024", description = "Prompt tokens after the prefix (default: ${DEFAULT-VALUE}).")
    int randomInputLen;

    @Option(names = "--random-output-len", defaultValue = "128", description = "max_tokens per request (default: ${DEFAULT-VALUE}).")
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

    @Option(names = "--request-rate", paramLabel = "REQ_PER_S|inf",
            description = "Mean arrival rate, req/s, or inf (default: 10; a profile's own load when --workload is given).")
    String requestRate;

    @Option(names = "--burstiness", description = "Gamma shape of inter-arrival gaps; 1 = Poisson (default: 1).")
    Double burstiness;

    @Option(names = "--max-concurrency", description = "Cap on requests in flight; with --request-rate inf, a closed loop of N users.")
    Integer maxConcurrency;

    @Option(names = "--ramp-up-strategy", description = "linear or exponential (needs --ramp-up-start-rps and --ramp-up-end-rps).")
    String rampUpStrategy;

    @Option(names = "--ramp-up-start-rps", description = "Ramp start rate, req/s.")
    Double rampUpStartRps;

    @Option(names = "--ramp-up-end-rps", description = "Ramp end rate, req/s.")
    Double rampUpEndRps;

    @Option(names = "--num-warmups", defaultValue = "0",
            description = "Unmeasured requests sent first, on top of --num-prompts (default: ${DEFAULT-VALUE}).")
    long numWarmups;

    @Option(names = "--warmup-duration", defaultValue = "0",
            description = "Requests sent in the first S seconds are not measured (default: ${DEFAULT-VALUE}).")
    double warmupDurationS;

    @Option(names = "--seed", defaultValue = "0", description = "Workload seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--ignore-eos", description = "Every request generates exactly its max_tokens.")
    boolean ignoreEos;

    @Option(names = "--eos-mean-tokens",
            description = "Without --ignore-eos: the model stops at a geometric EOS position with this mean, clipped to max_tokens "
                    + "(default: no EOS before max_tokens).")
    Double eosMeanTokens;

    @Option(names = "--goodput", arity = "1..*", paramLabel = "KEY:MS",
            description = "SLOs for request_goodput: ttft:MS tpot:MS e2el:MS.")
    List<String> goodput = List.of();

    @Option(names = "--percentile-metrics", defaultValue = "ttft,tpot,itl",
            description = "Metrics to report percentiles for: ttft,tpot,itl,e2el (default: ${DEFAULT-VALUE}).")
    String percentileMetrics;

    @Option(names = "--metric-percentiles", defaultValue = "99", description = "Comma-separated percentiles (default: ${DEFAULT-VALUE}).")
    String metricPercentiles;

    @Option(names = "--save-result", description = "Write the result JSON.")
    boolean saveResult;

    @Option(names = "--result-dir", defaultValue = ".", description = "Directory of the result files (default: current).")
    Path resultDir;

    @Option(names = "--result-filename", description = "Result JSON file name (default: vLLM's backend-RATEqps-MODEL-DATE.json).")
    String resultFilename;

    @Option(names = "--save-detailed", description = "Stream one JSON line per request to RESULT.jsonl beside the result.")
    boolean saveDetailed;

    @Option(names = "--replicas", defaultValue = "1", description = "Engine replicas behind the router (default: ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--router", defaultValue = "round-robin", description = "round-robin or least-loaded (default: ${DEFAULT-VALUE}).")
    String router;

    @Mixin
    DeploymentOptions deployment;

    @Override
    public void run() {
        ConfigException.check(numWarmups >= 0, "--num-warmups must be >= 0, got %d", numWarmups);
        ConfigException.check(replicas >= 1, "--replicas must be >= 1, got %d", replicas);
        ConfigException.check(warmupDurationS >= 0 && Double.isFinite(warmupDurationS),
                "--warmup-duration must be >= 0 s, got %s", warmupDurationS);
        WorkloadSpec spec = workloadSpec();
        Workload workload = Workload.open(spec);
        Deployment d = deployment.deployment();
        Replica[] fleet = new Replica[replicas];
        for (int i = 0; i < replicas; i++) {
            fleet[i] = new Replica(i, deployment.engine());
        }
        SimulationOptions options = SimulationOptions.defaults().withWarmups(numWarmups)
                .withWarmupDurationNanos(Math.round(warmupDurationS * 1e9)).withSlo(GoodputSlo.parse(goodput));
        LoadPattern load = spec.load();
        RunInfo info = new RunInfo(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")), "infersim",
                d.model().hfId(), d.model().hfId(), workload.size() - Math.min(numWarmups, workload.size()),
                load.requestRatePerS(), load.burstiness(), load.maxConcurrency(), List.of(percentileMetrics.split(",")),
                parsePercentiles());
        PrintStream out = System.out;
        out.println(KvCapacity.of(d).describe());
        String file = resultFilename != null ? resultFilename : info.defaultResultFileName();
        Path detailFile = saveDetailed ? resultDir.resolve(file.replaceFirst("\\.json$", "") + ".jsonl") : null;
        SimulationResult result;
        try (DetailWriter detail = detailFile == null ? null : new DetailWriter(detailFile)) {
            result = new Simulation(fleet, Router.byName(router), options, detail).run(workload);
        }
        BenchmarkReport report = result.report(info);
        report.printSummary(out);
        out.println(result.saturation().saturated()
                ? "Saturated: yes (" + result.saturation().reason() + ")"
                : "Saturated: no (" + result.saturation().reason() + ")");
        if (saveResult) {
            Path path = resultDir.resolve(file);
            report.write(path);
            out.println("Result written to " + path);
        }
        if (detailFile != null) {
            out.println("Per-request detail written to " + detailFile);
        }
        out.flush();
    }

    private WorkloadSpec workloadSpec() {
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
            b.prefixRepetitionOrder(PrefixOrder.parse(prefixRepetitionOrder));
            if (rampUpStrategy != null) {
                ConfigException.check(rampUpStartRps != null && rampUpEndRps != null,
                        "--ramp-up-strategy needs --ramp-up-start-rps and --ramp-up-end-rps");
                b.rampUp(RampStrategy.parse(rampUpStrategy), rampUpStartRps, rampUpEndRps);
            }
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage(), e);
        }
        if (workloadProfile != null) {
            b.workloadProfile(workloadProfile);
            if (!datasetName.equals("random")) {
                b.datasetName(datasetName);
            }
        } else {
            b.datasetName(datasetName);
        }
        if (numPrompts != null) {
            b.numPrompts(numPrompts);
        }
        if (requestRate != null) {
            b.requestRate(parseRate(requestRate));
        } else if (workloadProfile == null && rampUpStrategy == null) {
            b.requestRate(10);
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
        WorkloadSpec spec = b.build();
        // As in vLLM, warmups come on top of --num-prompts: the first requests of a longer stream, not measured.
        return numWarmups == 0 ? spec : b.numPrompts(spec.numPrompts() + numWarmups).build();
    }

    private static double parseRate(String text) {
        try {
            return WorkloadSpec.parseRate("--request-rate", text);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage(), e);
        }
    }

    private List<Double> parsePercentiles() {
        try {
            return java.util.Arrays.stream(metricPercentiles.split(",")).map(String::trim).map(Double::valueOf).toList();
        } catch (NumberFormatException e) {
            throw new ConfigException("--metric-percentiles: expected comma-separated numbers, got '" + metricPercentiles + "'");
        }
    }
}
