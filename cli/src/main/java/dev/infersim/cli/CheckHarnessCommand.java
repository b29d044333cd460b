package dev.infersim.cli;

import dev.infersim.bench.HarnessCheck;
import dev.infersim.bench.HarnessResults;
import dev.infersim.bench.TruthTimeline;
import dev.infersim.engine.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code infersim check-harness --format vllm|aiperf|guidellm RESULT --truth FILE}: another benchmark harness's
 * per-request results held against the mock server's truth log ({@code serve --truth-log}).
 */
@Command(name = "check-harness", mixinStandardHelpOptions = true,
        description = "Check another benchmark harness against the mock's ground truth: match its per-request results to "
                + "the truth log of 'infersim serve --truth-log' and report each metric's error (harness minus truth: TTFT, "
                + "TPOT, E2EL, mean ITL, ITL count, token counts; p50/p99/max), the rate the server saw, and known harness "
                + "behaviours (per-chunk ITL, TTFT growing with load, rate under-delivery).")
public final class CheckHarnessCommand implements Callable<Integer> {

    @Option(names = "--format", required = true, paramLabel = "vllm|aiperf|guidellm",
            description = "vllm: 'vllm bench serve --save-result --save-detailed' JSON; aiperf: profile_export.jsonl; "
                    + "guidellm: the benchmarks report JSON.")
    String format;

    @Parameters(index = "0", paramLabel = "RESULT", description = "The harness's result file.")
    Path result;

    @Option(names = "--truth", required = true, paramLabel = "FILE", description = "The server's truth log (serve --truth-log).")
    Path truth;

    @Option(names = "--request-rate", paramLabel = "REQ/S",
            description = "The rate the harness was asked for (default: the result's request_rate, where it has one).")
    Double requestRate;

    @Override
    public Integer call() {
        HarnessResults.Format f = HarnessResults.Format.parse(format);
        ConfigException.check(Files.isReadable(result), "RESULT %s: no such readable file", result);
        ConfigException.check(Files.isReadable(truth), "--truth %s: no such readable file", truth);
        ConfigException.check(requestRate == null || requestRate > 0, "--request-rate must be > 0, got %s", requestRate);
        HarnessResults.Results measured = HarnessResults.read(f, result);
        List<TruthTimeline.Row> rows = TruthTimeline.read(truth);
        ConfigException.check(!rows.isEmpty(), "--truth %s: no finished requests", truth);
        ConfigException.check(!measured.requests().isEmpty(), "RESULT %s: no successful requests", result);
        HarnessCheck.Report report = HarnessCheck.check(measured, rows, requestRate == null ? Double.NaN : requestRate);
        System.out.print(HarnessCheck.render(report));
        return ExitCodes.OK;
    }
}
