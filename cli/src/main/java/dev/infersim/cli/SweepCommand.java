package dev.infersim.cli;

import dev.infersim.cli.options.ClientOptions;
import dev.infersim.cli.options.OptionGroup;
import dev.infersim.cli.options.OptionLimits;
import dev.infersim.cli.options.WorkloadOptions;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.report.BenchResult;
import dev.infersim.bench.report.HtmlReport;
import dev.infersim.bench.report.LoadSweep;
import dev.infersim.common.ConfigException;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.ResultJson;
import dev.infersim.result.RunHeader;
import dev.infersim.result.VllmDetailArrays;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code infersim sweep}: one benchmark per request rate (open loop) or per concurrency (closed loop), each with its
 * own warmup, then the saturation knee and the highest load meeting the goodput SLO ({@link LoadSweep}), one combined
 * result JSON and optionally an HTML report with the sweep curves. With {@code --save-detailed} each load point streams
 * its requests to its own JSONL file beside the combined result, which names it. When a point after the first cannot
 * even get its initial test request answered, the sweep stops there and still writes what it measured, that point
 * marked with {@code infersim_error} (exit code 3).
 */
@Command(name = "sweep", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Run bench at several request rates or concurrencies; find the saturation knee and the highest load "
                + "meeting the --goodput SLO; write one combined result.")
public final class SweepCommand implements Callable<Integer> {

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--request-rates", split = ",", paramLabel = "REQ_PER_S",
            description = "Open-loop rates to run, req/s (each at most " + OptionLimits.MAX_RATE + "), e.g. 1,2,4,8 (run lightest first, each once).")
    List<String> requestRates;

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--concurrencies", split = ",", paramLabel = "N",
            description = "Closed-loop concurrencies to run (each at most " + OptionLimits.MAX_CONCURRENCY + "), e.g. 1,4,16,64 (run lightest first, each once).")
    List<Integer> concurrencies;

    @OptionGroup.In(OptionGroup.CLIENT)
    @Option(names = "--reset-prefix-cache",
            description = "Before each load point, ask the server to forget its prefix cache (POST /reset_prefix_cache, "
                    + "which infersim serve and vLLM mount with VLLM_SERVER_DEV_MODE=1). Each point sends new prompts anyway "
                    + "(point i uses --seed + i); this also clears what earlier runs left.")
    boolean resetPrefixCache;

    @OptionGroup.In(OptionGroup.OUTPUT)
    @Option(names = "--slo-attainment", defaultValue = "0.9",
            description = "Share of requests that must meet every --goodput SLO for a load to pass (default: ${DEFAULT-VALUE}).")
    double sloAttainment;

    @Mixin
    WorkloadOptions workload;

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() {
        ConfigException.check((requestRates == null) != (concurrencies == null),
                "give exactly one of --request-rates and --concurrencies");
        ConfigException.check(sloAttainment > 0 && sloAttainment <= 1, "--slo-attainment must be in (0, 1], got %s",
                sloAttainment);
        LoadSweep.Mode mode = requestRates != null ? LoadSweep.Mode.REQUEST_RATE : LoadSweep.Mode.MAX_CONCURRENCY;
        // Lightest first and each load once: the knee is judged against the lightest load and from one point to the
        // next, and a point's per-request file is named by its load, so a repeated load would overwrite its own.
        List<Double> loads = (requestRates != null
                ? requestRates.stream().map(r -> WorkloadOptions.parseRate("--request-rates", r))
                : concurrencies.stream().map(c -> {
                    ConfigException.check(c >= 1, "--concurrencies must be >= 1, got %d", c);
                    return (double) c;
                })).distinct().sorted().toList();
        PrintStream out = System.out;
        String resultName = resultName(mode);
        Progress progress = new Progress(loads.size(), System.console() != null);
        List<LoadSweep.Point> points = new ArrayList<>();
        List<BenchResult> runs = new ArrayList<>();
        UnmeasuredRun unmeasured = null;
        ObjectNode metadata = client.userMetadata();
        metadata.put("infersim_version", Version.current());
        metadata.set("infersim_workload", workload.describe());
        boolean allValid = true;
        BenchConfig config = client.config(workload.ignoreEos);
        client.prepareOutputs(); // an unusable --result-dir or --html must fail now, not after the whole sweep
        try (BenchmarkClient bench = new BenchmarkClient(config, client.tokenizer);
             InterruptGuard guard = new InterruptGuard(bench::stop)) {
            for (int i = 0; i < loads.size(); i++) {
                double load = loads.get(i);
                // New prompts at every load: the same seed would send the lightest point's prompts again, and the
                // server's prefix cache would serve them, so TTFT would fall as the load rises.
                long seed = workload.seed + i;
                WorkloadSpec spec = mode == LoadSweep.Mode.REQUEST_RATE
                        ? workload.spec(load, null, client.report.numWarmups, seed)
                        : workload.spec(Double.POSITIVE_INFINITY, (int) load, client.report.numWarmups, seed);
                progress.show(i, mode.key() + " " + format(load));
                if (resetPrefixCache) {
                    String failed = bench.resetPrefixCache();
                    // before the first point the flag is wrong for this server; later, the points measured stand
                    ConfigException.check(failed == null || !points.isEmpty(), "--reset-prefix-cache: %s", failed);
                    if (failed != null) {
                        out.println("Warning at " + mode.key() + " " + format(load) + ": --reset-prefix-cache: " + failed);
                    }
                }
                Path detail = client.report.saveDetailed ? detailFile(resultName, mode, load) : null;
                Workload stream = Workload.open(spec);
                ObjectNode pointMetadata = metadata.deepCopy();
                pointMetadata.put("infersim_workload_seed", seed);
                BenchResult measured = client.validated(bench.run(stream, client.report.numWarmups,
                        client.warmupDurationNanos(), client.durationNanos(), pointMetadata, detail));
                String error = measured.keys().error();
                if (error != null) {
                    if (points.isEmpty()) {
                        // nothing measured yet: the endpoint or the flags are wrong, as bench reports it
                        throw new ConfigException(error);
                    }
                    // The server stopped answering at this load. Heavier loads would fare no better; keep what was
                    // measured, mark this point, and write the sweep.
                    unmeasured = UnmeasuredRun.of(mode, load, error);
                    points.add(LoadSweep.Point.unmeasured(load, error));
                    allValid = false;
                    break;
                }
                allValid &= measured.valid();
                points.add(LoadSweep.Point.of(load, measured.result()));
                runs.add(measured);
                if (measured.keys().interrupted()) {
                    break;
                }
            }
            progress.done();
            LoadSweep.Summary sweep = LoadSweep.analyze(mode, points, sloAttainment);
            print(mode, sweep, runs, unmeasured, out);
            write(resultName, sweep, runs, unmeasured, out);
        }
        return allValid ? ExitCodes.OK : ExitCodes.INVALID_RUN;
    }

    /**
     * The result entry of a load point whose initial test request failed, so that none of its requests was sent: its
     * load (request_rate {@code "inf"} for a concurrency), nothing completed or failed, invalid, and why.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record UnmeasuredRun(@JsonSerialize(using = RunHeader.RequestRateWriter.class) double requestRate,
                         Integer maxConcurrency, long completed, long failed,
                         @JsonProperty("infersim_valid") boolean valid,
                         @JsonProperty("infersim_invalid_reasons") List<String> invalidReasons,
                         @JsonProperty("infersim_error") String error) {

        static UnmeasuredRun of(LoadSweep.Mode mode, double load, String error) {
            boolean rate = mode == LoadSweep.Mode.REQUEST_RATE;
            return new UnmeasuredRun(rate ? load : Double.POSITIVE_INFINITY, rate ? null : (int) load, 0, 0, false,
                    List.of("no request was sent: " + error), error);
        }
    }

    /** A sweep's result file: its conclusions, then each load point's run as bench writes it. */
    record SweepFile(@JsonProperty("infersim_sweep") LoadSweep.Summary sweep, List<?> runs) {
    }

    private void print(LoadSweep.Mode mode, LoadSweep.Summary sweep, List<BenchResult> runs, UnmeasuredRun unmeasured,
                       PrintStream out) {
        out.println("=".repeat(20) + " Sweep over " + sweep.mode() + " " + "=".repeat(20));
        out.printf(Locale.ROOT, "%10s %10s %10s %12s %12s %12s %8s %6s%n", "load", "req/s", "tok/s", "p50 TTFT ms",
                "p99 TTFT ms", "p50 TPOT ms", "SLO ok", "valid");
        for (LoadSweep.Row row : sweep.points()) {
            LoadSweep.Figures p = row.figures();
            // A point where nothing completed has no latencies (vLLM writes 0 for them): show none rather than 0 or NaN.
            boolean measured = num(p.completed()) > 0;
            out.printf(Locale.ROOT, "%10s %10s %10s %12s %12s %12s %8s %6s%n", format(row.load()),
                    cell(p.requestThroughput(), "%.2f"), cell(p.outputThroughput(), "%.1f"),
                    measured ? cell(p.medianTtftMs(), "%.2f") : "-", measured ? cell(p.p99TtftMs(), "%.2f") : "-",
                    measured ? cell(p.medianTpotMs(), "%.2f") : "-",
                    row.sloAttainment() == null ? "-" : String.format(Locale.ROOT, "%.1f%%",
                            100 * row.sloAttainment()), p.valid());
        }
        for (BenchResult run : runs) {
            String load = load(mode, run.result().run().requestRate(), run.result().run().maxConcurrency());
            for (String warning : run.keys().warnings()) {
                out.println("Warning at " + mode.key() + " " + load + ": " + warning);
            }
            if (!run.keys().valid()) {
                out.println("Invalid at " + mode.key() + " " + load + ": " + String.join("; ", run.invalidReasons()));
            }
        }
        if (unmeasured != null) {
            out.println("Invalid at " + mode.key() + " " + load(mode, unmeasured.requestRate(),
                    unmeasured.maxConcurrency()) + ": " + String.join("; ", unmeasured.invalidReasons()));
        }
        out.println("Saturation knee: " + (sweep.kneeLoad() == null ? "none" : format(sweep.kneeLoad()))
                + between(sweep.kneeLoadInterval()) + " (" + sweep.kneeReason() + ")");
        Double best = sweep.maxLoadMeetingSlo();
        List<Double> invalid = sweep.invalidLoads();
        String skipped = invalid.isEmpty() ? "" : " (invalid loads not counted: " + invalid.stream()
                .map(SweepCommand::format).collect(java.util.stream.Collectors.joining(", ")) + ")";
        out.println("Highest load meeting the goodput SLO: " + (best == null ? "none" + (client.report.slo().equals(GoodputSlo.NONE)
                ? " (no --goodput given)" : "") : format(best) + between(sweep.maxLoadMeetingSloInterval()))
                + skipped);
    }

    /** A run's load as its result has it: the request rate ({@code inf} for all at once), or the concurrency. */
    private static String load(LoadSweep.Mode mode, double requestRate, Integer maxConcurrency) {
        return mode == LoadSweep.Mode.REQUEST_RATE
                ? Double.isInfinite(requestRate) ? "inf" : String.valueOf(requestRate) : String.valueOf(maxConcurrency);
    }

    /** A conclusion's 95% interval among the loads swept ({@link LoadSweep}), or nothing. */
    private static String between(List<Double> interval) {
        if (interval == null || interval.size() != 2) {
            return "";
        }
        return ", 95%: between " + (interval.get(0) == null ? "below the lightest load" : format(interval.get(0)))
                + " and " + format(interval.get(1));
    }

    /** The combined result's file name: --result-filename, else sweep-MODE-MODEL-DATE.json. */
    private String resultName(LoadSweep.Mode mode) {
        return client.report.resultFilename != null ? client.report.resultFilename : "sweep-" + mode.key() + "-"
                + client.model.substring(client.model.lastIndexOf('/') + 1) + "-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + ".json";
    }

    /** A load point's per-request file beside the combined result: s.json gives s-rate-4.jsonl, s-concurrency-16.jsonl. */
    private Path detailFile(String resultName, LoadSweep.Mode mode, double load) {
        String point = (mode == LoadSweep.Mode.REQUEST_RATE ? "rate-" : "concurrency-") + format(load);
        return client.report.resultDir.resolve(resultName.replaceFirst("\\.json$", "") + "-" + point + ".jsonl");
    }

    private void write(String resultName, LoadSweep.Summary sweep, List<BenchResult> runs, UnmeasuredRun unmeasured,
                       PrintStream out) {
        for (BenchResult run : runs) {
            if (run.keys().detailedFile() != null) {
                out.println("Per-request detail written to " + run.keys().detailedFile());
            }
        }
        List<Object> written = new ArrayList<>();
        List<Object> drawn = new ArrayList<>();
        for (BenchResult run : runs) {
            String detail = run.keys().detailedFile();
            written.add(detail == null ? run.result() : run.result().withDetails(VllmDetailArrays.of(Path.of(detail))));
            drawn.add(run.result());
        }
        if (unmeasured != null) {
            written.add(unmeasured);
            drawn.add(unmeasured);
        }
        OutputWrites writes = new OutputWrites();
        if (client.report.saveResult) {
            Path path = client.report.resultDir.resolve(resultName);
            if (writes.attempt(() -> ResultJson.write(path, new SweepFile(sweep, written)))) {
                out.println("Sweep result written to " + path);
            }
        }
        if (client.html != null) {
            writes.attempt(() -> client.writeHtml(() -> HtmlReport.writeSweep(client.html, sweep, drawn), out));
        }
        // files a run could not write (its per-request rows on a full disk): after everything else, one line, exit 2
        for (BenchResult run : runs) {
            run.outputErrors().forEach(writes::failed);
        }
        writes.finish();
    }

    private static double num(Number v) {
        return v == null ? Double.NaN : v.doubleValue();
    }

    private static String cell(Number v, String format) {
        double x = num(v);
        return Double.isNaN(x) ? "-" : String.format(Locale.ROOT, format, x);
    }

    private static String format(double load) {
        return Double.isInfinite(load) ? "inf" : load == Math.rint(load) ? Long.toString((long) load) : Double.toString(load);
    }

    /** A one-line progress bar on stderr, redrawn in place, on a terminal; else one line per load point on stdout. */
    private static final class Progress {
        private final int total;
        private final boolean tty;

        Progress(int total, boolean tty) {
            this.total = total;
            this.tty = tty;
        }

        void show(int done, String what) {
            if (!tty) {
                System.out.println("Sweep point " + (done + 1) + " of " + total + ": " + what);
                System.out.flush();
            } else {
                int width = 30;
                int filled = done * width / total;
                System.err.print("\r[" + "#".repeat(filled) + " ".repeat(width - filled) + "] " + done + "/" + total
                        + " running " + what + "   ");
                System.err.flush();
            }
        }

        void done() {
            if (tty) {
                System.err.println("\r[" + "#".repeat(30) + "] " + total + "/" + total + " done" + " ".repeat(20));
            }
        }
    }
}
