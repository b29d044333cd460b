package dev.infersim.cli;

import dev.infersim.cli.options.ClientOptions;
import dev.infersim.cli.options.OptionGroup;
import dev.infersim.cli.options.OptionLimits;
import dev.infersim.cli.options.WorkloadOptions;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.config.RunPlan;
import dev.infersim.bench.report.BenchResult;
import dev.infersim.bench.report.HtmlReport;
import dev.infersim.bench.report.ShardMerge;
import dev.infersim.common.ConfigException;
import dev.infersim.result.OutputFile;
import dev.infersim.result.ResultJson;
import dev.infersim.result.VllmDetailArrays;
import dev.infersim.workload.arrival.RampUp;
import dev.infersim.workload.Shard;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code infersim bench}: benchmarks an OpenAI-compatible streaming endpoint with {@code vllm bench serve}'s flags,
 * open loop from an absolute schedule (latencies from the scheduled send time) or a closed loop of N users, and
 * prints vLLM's summary plus send lag, errors and the ground-truth check.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Benchmark an OpenAI-compatible endpoint (vLLM, SGLang, TGI, infersim serve) like vllm bench serve.")
public final class BenchCommand implements Callable<Integer> {

    @Mixin
    WorkloadOptions workload;

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--request-rate", paramLabel = "REQ_PER_S|inf",
            description = "Mean arrival rate, req/s, at most " + OptionLimits.MAX_RATE + "; inf sends everything at once (default: inf; a trace replays its own "
                    + "timestamps).")
    String requestRate;

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--max-concurrency",
            description = "Cap on requests in flight, at most " + OptionLimits.MAX_CONCURRENCY
                    + "; with --request-rate inf, a closed loop of exactly N in flight.")
    Integer maxConcurrency;

    @OptionGroup.In(OptionGroup.CLIENT)
    @Option(names = "--shard", paramLabel = "I/N",
            description = "Send only shard I of N of the workload (0-based): every N-th request, or a hash split of a "
                    + "closed loop, whose users are dealt out to the shards. Every shard generates the same seeded "
                    + "schedule; run N of them (with --start-at) on several machines and combine their results with "
                    + "infersim merge. Needs --save-result; also writes RESULT.hlog, the latencies' HdrHistogram log.")
    String shard;

    @OptionGroup.In(OptionGroup.CLIENT)
    @Option(names = "--start-at", paramLabel = "EPOCH_MS",
            description = "Start the schedule at this wall-clock instant (milliseconds since the Unix epoch), so that "
                    + "shards on several machines start together; it must be ahead once the client is set up.")
    Long startAt;

    @OptionGroup.In(OptionGroup.CLIENT)
    @Option(names = "--baseline-url", paramLabel = "URL",
            description = "With --validate through a gateway: after the run, run the same workload directly against "
                    + "this one replica (at the share of the load one replica got through the gateway) and report the "
                    + "gateway's own added TTFT, client TTFT minus server TTFT through it against direct.")
    String baselineUrl;

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() {
        Shard part = shard == null ? null : Shard.parse(shard);
        ConfigException.check(part == null || client.report.saveResult,
                "--shard: needs --save-result, or the shard's result is lost");
        ConfigException.check(startAt == null || startAt > 0, "--start-at: expected milliseconds since the epoch, got %d",
                startAt);
        ConfigException.check(baselineUrl == null || client.validate && part == null,
                "--baseline-url: needs --validate (the comparison is against the server's ground truth) and no --shard");
        WorkloadSpec spec = workload.spec(requestRate == null ? null : WorkloadOptions.parseRate("--request-rate", requestRate),
                maxConcurrency,
                client.report.numWarmups);
        Workload stream = Workload.open(spec);
        PrintStream out = System.out;

        ObjectNode metadata = client.userMetadata();
        metadata.put("infersim_version", Version.current());
        metadata.set("infersim_workload", workload.describe());
        BenchConfig config = client.config(spec.ignoreEos());
        client.prepareOutputs(); // an unusable --result-dir or --html must fail now, not after the run
        // Written under a name of their own until the result's name (with the run's date) is known.
        Path detail = client.report.saveDetailed ? scratchFile(".jsonl") : null;
        Path latencyLog = part == null ? null : scratchFile(".hlog");
        BenchResult result;
        ConfigException baselineFailed = null;
        try {
            try (BenchmarkClient bench = new BenchmarkClient(config, client.tokenizer);
                 InterruptGuard guard = new InterruptGuard(bench::stop)) {
                out.printf("Benchmarking %s%s: %d requests, %s%s%n", config.baseUrl(), config.endpoint(), stream.size(),
                        describeLoad(spec, stream), part == null ? "" : "; shard " + part + " sends "
                                + part.size(stream.size(), stream.isClosedLoop()) + " of them");
                RunPlan plan = new RunPlan(client.report.numWarmups, client.warmupDurationNanos(),
                        client.durationNanos(), metadata, detail, part, startAt == null ? 0 : startAt, latencyLog);
                result = client.validated(bench.run(stream, plan));
            }
            if (baselineUrl != null && result.keys().error() == null && !result.keys().interrupted()) {
                try {
                    result = result.withBaseline(runBaseline(spec, result, out), baselineUrl);
                } catch (ConfigException e) {
                    baselineFailed = e; // the run itself stands: it is written first
                    result = result.withBaselineError(baselineUrl, e.getMessage());
                }
            }
            result = write(result, detail, latencyLog, out);
        } finally {
            deleteScratch(detail);
            deleteScratch(latencyLog);
        }
        if (baselineFailed != null) {
            throw baselineFailed;
        }
        String error = result.keys().error();
        if (error != null) {
            // nothing was measured: the endpoint or the flags are wrong; the result file says so too
            throw new ConfigException(error);
        }
        return result.valid() ? ExitCodes.OK : ExitCodes.INVALID_RUN;
    }

    /**
     * The direct run beside a gateway run: the same workload with the share of its load one replica got (the
     * replicas that served the gateway run), against --baseline-url.
     */
    private BenchResult runBaseline(WorkloadSpec whole, BenchResult throughGateway, PrintStream out) {
        int replicas = Math.max(1, throughGateway.keys().groundTruth().requestsPerReplica().size());
        WorkloadSpec share = workload.shareOf(whole, replicas, client.report.numWarmups);
        BenchConfig direct = client.config(share.ignoreEos(), baselineUrl);
        out.printf("Baseline: %d requests directly to %s, %s%n", share.numPrompts(), baselineUrl,
                describeLoad(share, Workload.open(share)));
        try (BenchmarkClient bench = new BenchmarkClient(direct, client.tokenizer);
             InterruptGuard guard = new InterruptGuard(bench::stop)) {
            BenchResult r = bench.run(Workload.open(share), RunPlan.of(client.report.numWarmups,
                    client.warmupDurationNanos(), client.durationNanos(), ResultJson.mapper().createObjectNode(), null));
            ConfigException.check(r.keys().error() == null, "--baseline-url: %s", r.keys().error());
            ConfigException.check(r.hasGroundTruth(), "--baseline-url: %s sent no ground truth: the baseline must be an "
                    + "infersim replica", baselineUrl);
            return r;
        }
    }

    /**
     * Prints the summary, then writes every file it can (each whole or not at all); the files it could not write, during
     * the run or now, end the command with one line naming each and why (exit code 2).
     */
    private BenchResult write(BenchResult measured, Path detail, Path latencyLog, PrintStream out) {
        measured.printSummary(out);
        out.flush();
        String file = client.report.resultFilename != null ? client.report.resultFilename
                : measured.report().defaultFileName();
        Path named = detail == null ? null : client.report.resultDir.resolve(file.replaceFirst("\\.json$", "") + ".jsonl");
        Path path = client.report.resultDir.resolve(file);
        OutputWrites writes = new OutputWrites();
        for (String e : measured.outputErrors()) {
            // the run wrote under scratch names; the user knows the files by the names they were to have
            writes.failed(rename(rename(e, detail, named), latencyLog, ShardMerge.latencyLog(path)));
        }
        BenchResult result = measured.withOutputError(null); // the result lists them, none or some
        boolean detailWritten = detail != null && result.keys().detailedFile() != null;
        if (detailWritten) {
            detailWritten = writes.attempt(() -> OutputFile.move(detail, named));
            result = result.withDetailedFile(detailWritten ? named.toString() : null);
            if (detailWritten) {
                out.println("Per-request detail written to " + named);
            }
        }
        BenchResult written = result;
        if (client.report.saveResult) {
            boolean withArrays = detailWritten;
            if (writes.attempt(() -> {
                if (withArrays) {
                    written.write(path, VllmDetailArrays.of(named));
                } else {
                    written.write(path);
                }
            })) {
                out.println("Result written to " + path);
            }
            if (latencyLog != null && Files.exists(latencyLog)
                    && writes.attempt(() -> OutputFile.move(latencyLog, ShardMerge.latencyLog(path)))) {
                out.println("Latency histograms written to " + ShardMerge.latencyLog(path));
            }
        }
        if (client.html != null) {
            writes.attempt(() -> client.writeHtml(() -> HtmlReport.writeRun(client.html, written.result()), out));
        }
        out.flush();
        writes.finish();
        return written;
    }

    private static String rename(String message, Path scratch, Path name) {
        return scratch == null ? message : message.replace(scratch.toString(), name.toString());
    }

    private static void deleteScratch(Path scratch) {
        if (scratch != null) {
            try {
                Files.deleteIfExists(scratch);
            } catch (IOException ignored) {
                // a leftover hidden file is all that remains; the failure that matters is reported
            }
        }
    }

    private Path scratchFile(String suffix) {
        try {
            return OutputFile.createScratch(client.report.resultDir, ".infersim-", suffix);
        } catch (IOException e) {
            throw new ConfigException("--result-dir: cannot create a file in " + client.report.resultDir + ": "
                    + OutputFile.reason(e), e);
        }
    }

    static String describeLoad(WorkloadSpec spec, Workload stream) {
        if (stream.isClosedLoop()) {
            return "closed loop of " + spec.load().maxConcurrency() + " in flight";
        }
        RampUp ramp = spec.load().rampUp();
        String rate = stream.dataset().recordedArrivals() != null ? "at the trace's own timestamps"
                // a ramp leaves the request rate at its default, inf, which would read as "all at once"
                : ramp != null ? ramp.strategy().name().toLowerCase(Locale.ROOT) + " ramp from " + ramp.startRps()
                        + " to " + ramp.endRps() + " req/s"
                : Double.isInfinite(spec.load().requestRatePerS()) ? "all at once"
                : spec.load().requestRatePerS() + " req/s (burstiness " + spec.load().burstiness() + ")";
        return "open loop, " + rate + (spec.load().maxConcurrency() > 0
                ? ", at most " + spec.load().maxConcurrency() + " in flight" : "");
    }
}
