package dev.infersim.cli.options;

import dev.infersim.common.ConfigException;
import dev.infersim.result.GoodputSlo;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;

/** What to measure and where to write it: the reporting flags of {@code vllm bench serve}. */
@OptionGroup.In(OptionGroup.OUTPUT)
public final class ReportOptions {
    private static final List<String> METRICS = List.of("ttft", "tpot", "itl", "e2el");

    @Option(names = "--num-warmups", defaultValue = "0",
            description = "Unmeasured requests sent first, on top of --num-prompts, at most " + OptionLimits.MAX_PROMPTS
                    + " (default: ${DEFAULT-VALUE}).")
    public long numWarmups;

    @Option(names = "--warmup-duration", defaultValue = "0",
            description = "Requests sent in the first S seconds are not measured (default: ${DEFAULT-VALUE}).")
    public double warmupDurationS;

    @Option(names = "--goodput", arity = "1..*", paramLabel = "KEY:MS",
            description = "SLOs for request_goodput: ttft:MS tpot:MS e2el:MS, each metric once (pairs may also be "
                    + "space-separated in one quoted argument). simulate also takes multiples of the latency of the "
                    + "workload's mean request served alone: ttft:4x tpot:1.5x.")
    public List<String> goodput = List.of();

    @Option(names = "--percentile-metrics", defaultValue = "ttft,tpot,itl",
            description = "Metrics to report percentiles for: ttft,tpot,itl,e2el (default: ${DEFAULT-VALUE}).")
    String percentileMetrics;

    @Option(names = "--metric-percentiles", defaultValue = "99", description = "Comma-separated percentiles (default: ${DEFAULT-VALUE}).")
    String metricPercentiles;

    @Option(names = "--save-result", description = "Write the result JSON.")
    public boolean saveResult;

    @Option(names = "--result-dir", defaultValue = ".", description = "Directory of the result files (default: current).")
    public Path resultDir;

    @Option(names = "--result-filename", description = "Result JSON file name (default: vLLM's backend-RATEqps-MODEL-DATE.json).")
    public String resultFilename;

    @Option(names = "--save-detailed", description = "Stream one JSON line per request to RESULT.jsonl beside the result "
            + "(sweep: RESULT-rate-R.jsonl or RESULT-concurrency-N.jsonl for each load point); bench and sweep also add "
            + "vLLM's per-request arrays input_lens, output_lens, ttfts, itls, generated_texts and errors to the saved result.")
    public boolean saveDetailed;

    /** Rejects flag values no run could use. */
    public void validate() {
        ConfigException.check(numWarmups >= 0, "--num-warmups must be >= 0, got %d", numWarmups);
        ConfigException.check(warmupDurationS >= 0 && Double.isFinite(warmupDurationS),
                "--warmup-duration must be >= 0 s, got %s", warmupDurationS);
        metrics();
        percentiles();
        ConfigException.check(resultFilename == null || !resultFilename.isBlank(), "--result-filename must not be blank");
    }

    /**
     * Creates --result-dir (and the folder a --result-filename with a path names) when results will be written, so a
     * directory that cannot exist fails before the run.
     */
    public void createResultDir() {
        if (!saveResult && !saveDetailed) {
            return;
        }
        try {
            Files.createDirectories(resultDir);
        } catch (IOException e) {
            throw new ConfigException("--result-dir: cannot create directory " + resultDir + " (" + e + ")", e);
        }
        if (resultFilename != null) {
            writableFile("--result-filename", resultDir.resolve(resultFilename));
        }
    }

    /** Creates the folder of {@code file} and checks the file can be written there; a ConfigException naming the flag. */
    public static void writableFile(String flag, Path file) {
        Path parent = file.toAbsolutePath().getParent();
        try {
            Files.createDirectories(parent);
        } catch (IOException e) {
            throw new ConfigException(flag + ": cannot create directory " + parent + " (" + e + ")", e);
        }
        ConfigException.check(!Files.isDirectory(file), "%s: %s is a directory", flag, file);
        ConfigException.check(Files.isWritable(parent) && (!Files.exists(file) || Files.isWritable(file)),
                "%s: cannot write %s", flag, file);
    }

    /**
     * The --percentile-metrics names, checked here so that a typo ends the command before a run rather than after it;
     * spaces around the commas are dropped ("ttft, e2el").
     */
    public List<String> metrics() {
        List<String> names = java.util.Arrays.stream(percentileMetrics.split(",")).map(String::trim).toList();
        // split drops trailing empty strings, so "," would otherwise be an empty list that reports nothing
        ConfigException.check(!names.isEmpty(), "--percentile-metrics: no metric given; use %s", String.join(", ", METRICS));
        for (String name : names) {
            ConfigException.check(METRICS.contains(name), "--percentile-metrics: unknown metric '%s'; use %s", name,
                    String.join(", ", METRICS));
        }
        return names;
    }

    public GoodputSlo slo() {
        return GoodputSlo.parse(goodput);
    }

    /** The objectives, where a multiple such as {@code ttft:4x} scales the latency {@code alone} gives. */
    public GoodputSlo slo(Supplier<GoodputSlo> alone) {
        return GoodputSlo.parse(goodput, alone);
    }

    public List<Double> percentiles() {
        try {
            List<Double> values = java.util.Arrays.stream(metricPercentiles.split(",")).map(String::trim)
                    .map(Double::valueOf).toList();
            // split drops trailing empty strings, so "," would otherwise be an empty list that reports nothing
            ConfigException.check(!values.isEmpty(), "--metric-percentiles: no percentile given, e.g. 50,90,99");
            return values;
        } catch (NumberFormatException e) {
            throw new ConfigException("--metric-percentiles: expected comma-separated numbers, got '" + metricPercentiles + "'");
        }
    }
}
