package dev.infersim.cli;

import dev.infersim.bench.harness.HarnessCheck;
import dev.infersim.bench.harness.HarnessResults;
import dev.infersim.bench.harness.HarnessTarget;
import dev.infersim.bench.harness.TruthTimeline;
import dev.infersim.cli.options.OptionLimits;
import dev.infersim.common.ConfigException;
import dev.infersim.result.OutputFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code infersim check-harness --format vllm|aiperf|guidellm|llmperf|generic RESULT --truth FILE}: another benchmark
 * harness's per-request results held against the mock server's truth log ({@code serve --truth-log}); the verdict is
 * the exit code ({@link ExitCodes#checkHarness}).
 */
@Command(name = "check-harness", mixinStandardHelpOptions = true,
        description = "Check another benchmark harness against the mock's ground truth: match its per-request results to "
                + "the truth log of 'infersim serve --truth-log' (by request id, by the generated text, else by an exact "
                + "assignment on time and fitted token counts), report each metric's error against the truth at the wire "
                + "(harness minus truth: TTFT and its before-send and after-first-token parts, TPOT, E2EL, mean ITL, ITL "
                + "count, token counts; p50/p99/max), the rate of its measured requests at the server with its interval "
                + "against the one asked, and findings with their evidence and cause (clock started late or early, time "
                + "units, a truth log of another run, dropped requests, rate off target, arrival process, repeated "
                + "schedule gaps, concurrency above the cap, warm-ups counted, hidden retries, coarse clock, token "
                + "coalescing, split chunks, event-loop stalls, output token counts). Under 95%% of the harness's "
                + "requests matched, no verdict is clean: the exit code says so and the findings are the diagnosis.")
public final class CheckHarnessCommand implements Callable<Integer> {

    @Option(names = "--format", required = true, paramLabel = "vllm|aiperf|guidellm|llmperf|generic",
            description = "vllm: 'vllm bench serve --save-result --save-detailed' JSON; aiperf: profile_export.jsonl; "
                    + "guidellm: the benchmarks report JSON; llmperf: its *_individual_responses.json; generic: "
                    + "infersim's per-request JSON Lines (benchmark-client README).")
    String format;

    @Parameters(index = "0", paramLabel = "RESULT", description = "The harness's result file.")
    Path result;

    @Option(names = "--truth", required = true, paramLabel = "FILE", description = "The server's truth log (serve --truth-log).")
    Path truth;

    @Option(names = "--request-rate", paramLabel = "REQ/S",
            description = "The rate the harness was asked for (at most " + OptionLimits.MAX_RATE + " req/s), Poisson unless the result says otherwise (default: the "
                    + "result's own, where it records one).")
    Double requestRate;

    @Option(names = "--max-concurrency", paramLabel = "N",
            description = "The cap on requests in flight the harness was given, at most " + OptionLimits.MAX_CONCURRENCY + " (default: the result's own, where it "
                    + "records one).")
    Integer maxConcurrency;

    @Option(names = "--warmup-requests", paramLabel = "N",
            description = "Requests the harness sent ahead of its run that its file does not declare (vllm bench serve's "
                    + "--num-warmups, which its result does not record); default 0.")
    Integer warmupRequests;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the report (errors, target, findings with "
            + "their evidence) as JSON to FILE.")
    Path json;

    @Override
    public Integer call() {
        HarnessResults.Format f = HarnessResults.Format.parse(format);
        ConfigException.check(Files.isReadable(result), "RESULT %s: no such readable file", result);
        ConfigException.check(Files.isReadable(truth), "--truth %s: no such readable file", truth);
        ConfigException.check(requestRate == null || requestRate > 0 && Double.isFinite(requestRate),
                "--request-rate must be a finite number > 0, got %s", requestRate);
        ConfigException.check(maxConcurrency == null || maxConcurrency > 0, "--max-concurrency must be > 0, got %s",
                maxConcurrency);
        ConfigException.check(warmupRequests == null || warmupRequests >= 0, "--warmup-requests must be >= 0, got %s",
                warmupRequests);
        HarnessResults.Results measured = HarnessResults.read(f, result);
        if (warmupRequests != null) {
            measured = measured.withLeadRequests(warmupRequests);
        }
        List<TruthTimeline.Row> rows = TruthTimeline.read(truth);
        ConfigException.check(!rows.isEmpty(), "--truth %s: no finished requests", truth);
        ConfigException.check(!measured.requests().isEmpty(), "RESULT %s: no successful requests", result);
        HarnessTarget target = requestRate == null ? measured.target() : measured.target().withRate(requestRate);
        if (maxConcurrency != null || warmupRequests != null) {
            target = new HarnessTarget(target.rateReqPerS(), target.process(), target.burstiness(),
                    maxConcurrency == null ? target.maxConcurrency() : maxConcurrency,
                    target.warmupRequests() + (warmupRequests == null ? 0 : warmupRequests));
        }
        HarnessCheck.Report report = HarnessCheck.check(measured, rows, target);
        System.out.print(HarnessCheck.render(report));
        if (json != null) {
            try {
                OutputFile.writeString(json, HarnessCheck.toJson(report));
            } catch (ConfigException e) {
                throw new ConfigException("--json: " + e.getMessage(), e);
            }
            System.out.println("Report written to " + json);
        }
        return switch (report.verdict()) {
            case CLEAN -> ExitCodes.OK;
            case FINDINGS -> ExitCodes.HARNESS_FINDINGS;
            case INCONCLUSIVE -> ExitCodes.HARNESS_INCONCLUSIVE;
        };
    }
}
