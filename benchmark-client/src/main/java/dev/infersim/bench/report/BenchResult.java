package dev.infersim.bench.report;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.measure.ClientGc;
import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.bench.measure.ErrorTally;
import dev.infersim.bench.measure.MetricsScraper;
import dev.infersim.bench.measure.RunValidity;
import dev.infersim.bench.measure.StreamFindings;
import dev.infersim.result.ResultJson;
import dev.infersim.result.ServingReport;
import dev.infersim.result.ServingResult;
import dev.infersim.result.VllmDetailArrays;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One measured run: its result in vLLM's schema with the client's keys ({@link ClientKeys}), with what the console
 * summary needs, and the errors by type. Prints vLLM's console block followed by the client's own.
 *
 * @param report the result and its console summary
 * @param errors failures by type
 */
public record BenchResult(ServingReport<ClientKeys> report, ErrorTally errors) {

    /** The result, as its file holds it. */
    public ServingResult<ClientKeys> result() {
        return report.result();
    }

    /** The client's keys. */
    public ClientKeys keys() {
        return report.producer();
    }

    /** Why the run is invalid; empty when its numbers can be trusted. */
    public List<String> invalidReasons() {
        return keys().invalidReasons();
    }

    public boolean valid() {
        return invalidReasons().isEmpty();
    }

    /** The result as a JSON tree, its keys in the order they are written. */
    public ObjectNode tree() {
        return ResultJson.tree(result());
    }

    /** Whether any request came with the server's ground truth (the {@code infersim} object of the mock). */
    public boolean hasGroundTruth() {
        return keys().groundTruth().requests() > 0;
    }

    /** This result with one more reason it is invalid, recorded in its keys as well. */
    public BenchResult invalidatedBy(String reason) {
        return with(keys().invalidatedBy(reason));
    }

    /** This result naming its per-request file ({@code null}: none was written). */
    public BenchResult withDetailedFile(String file) {
        return with(keys().withDetailedFile(file));
    }

    /**
     * This result with one more file it could not write in {@code infersim_output_errors}; with {@code null}, the
     * list written as it is (empty if nothing failed).
     */
    public BenchResult withOutputError(String failure) {
        return with(keys().withOutputError(failure));
    }

    /** The files this run could not write, one line each naming the file and why. */
    public List<String> outputErrors() {
        return keys().outputErrors() == null ? List.of() : keys().outputErrors();
    }

    /**
     * This result judged against a direct run to one replica behind the same gateway ({@code --baseline-url}): the
     * baseline's ground-truth error is kept as {@code infersim_baseline}, and the findings are drawn again, now with
     * the gateway's added latency.
     */
    public BenchResult withBaseline(BenchResult baseline, String baselineUrl) {
        ClientKeys.TruthError truth = keys().groundTruth();
        ClientKeys.TruthError direct = baseline.keys().groundTruth();
        double[] added = StreamFindings.addedTtftMs(truth, direct);
        ClientKeys.BaselineRun run = new ClientKeys.BaselineRun(baseline.result().run().requestRate(),
                baseline.result().totals().completed(), baseline.valid(), direct, added == null ? null : added[0],
                added == null ? null : added[1]);
        return with(keys().withBaseline(new ClientKeys.Baseline(baselineUrl, run, null),
                StreamFindings.of(truth, direct)));
    }

    /** This result with the direct baseline run that failed, and why. */
    public BenchResult withBaselineError(String baselineUrl, String error) {
        return with(keys().withBaseline(new ClientKeys.Baseline(baselineUrl, null, error), keys().findings()));
    }

    /** Writes the result as pretty-printed JSON, creating parent directories; whole or not at all. */
    public void write(Path file) {
        report.write(file);
    }

    /** Writes the result followed by vLLM's per-request arrays from the run's per-request file. */
    public void write(Path file, VllmDetailArrays details) {
        report.write(file, details);
    }

    private BenchResult with(ClientKeys keys) {
        return new BenchResult(report.withProducer(keys), errors);
    }

    /** vLLM's summary block, then send lag, errors, ground-truth error and validity. */
    public void printSummary(PrintStream out) {
        report.printSummary(out);
        ClientKeys k = keys();
        ClientKeys.LagSummary lag = k.sendLagMs();
        out.println(center("Client (infersim)"));
        out.printf(Locale.ROOT, "%-40s %.3f / %.3f / %.3f%n", "Send lag p50 / p99 / max (ms):", lag.p50(), lag.p99(),
                lag.max());
        ClientKeys.LagSummary reads = k.readDelayMs();
        if (reads != null && reads.samples() > 0) {
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f / %.3f%n", "Read delay p50 / p99 / max (ms):", reads.p50(),
                    reads.p99(), reads.max());
        }
        ClientKeys.NoiseMs noise = k.schedulingNoiseMs();
        if (noise != null) {
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f%n", "Machine noise p99, idle / in run (ms):",
                    noise.calibration().p99(), noise.duringRun().p99());
        }
        ClientGc.Collections gc = k.clientGc();
        if (gc != null) {
            out.printf(Locale.ROOT, "%-40s %s / %s%n", "Client GC in run, collections / ms:", gc.collections(),
                    gc.timeMs());
        }
        ClientKeys.LoopsMs loops = k.clientLoopsMs();
        if (loops != null) {
            out.printf(Locale.ROOT, "%-40s %.0f / %.0f%n", "Client event loops on / waiting for CPU (ms):",
                    loops.onCpu(), loops.waitingForCpu());
        }
        printVerdicts(k, out);
        out.printf(Locale.ROOT, "%-40s %s / %.1f%n", "Max / mean requests in flight:", k.maxInFlight(),
                k.meanInFlight());
        out.println("  (in flight: at one instant, as the client counts them; \"Peak concurrent requests\" above is "
                + "vLLM's: requests active at any time within the same one-second bin)");
        if (k.cancelled() > 0) {
            out.printf(Locale.ROOT, "%-40s %d of %d sent%n", "Cancelled in flight by the interrupt:", k.cancelled(),
                    k.sent());
        }
        if (k.promptTokenMismatches() > 0) {
            out.printf(Locale.ROOT, "%-40s %d (max %d tokens)%n", "Prompt length mismatches (server usage):",
                    k.promptTokenMismatches(), k.promptTokenMismatchMaxTokens());
        }
        printScrape(k.serverMetrics(), out);
        ClientKeys.TruthError truth = k.groundTruth();
        if (hasGroundTruth()) {
            ClientKeys.LagSummary ttft = truth.ttftAbsErrorMs();
            ClientKeys.LagSummary e2el = truth.e2elAbsErrorMs();
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f / %.3f%n", "TTFT error vs server p50/p99/max (ms):",
                    ttft.p50(), ttft.p99(), ttft.max());
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f / %.3f%n", "E2EL error vs server p50/p99/max (ms):",
                    e2el.p50(), e2el.p99(), e2el.max());
            Map<String, Long> spread = truth.requestsPerReplica() == null ? Map.of() : truth.requestsPerReplica();
            if (spread.size() > 1) {
                StringBuilder line = new StringBuilder();
                spread.forEach((replica, n) -> line.append(line.length() == 0 ? "" : ", ").append(replica).append(": ").append(n));
                out.printf(Locale.ROOT, "%-40s %s%n", "Requests per replica:", line);
                StringBuilder times = new StringBuilder();
                truth.perReplica().forEach((replica, r) -> {
                    times.append(times.length() == 0 ? "" : ", ").append(replica).append(": ")
                            .append(String.format(Locale.ROOT, "%.1f", r.meanTtftMs()));
                    if (r.meanQueueMs() != null) {
                        times.append(String.format(Locale.ROOT, " / %.1f", r.meanQueueMs()));
                    }
                });
                out.printf(Locale.ROOT, "%-40s %s%n", "Server TTFT / queue per replica (ms):", times);
            }
        }
        ClientKeys.Baseline baseline = k.baseline();
        if (baseline != null && baseline.run() != null && baseline.run().addedTtftP50Ms() != null) {
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f (direct to %s)%n", "Gateway's added TTFT p50 / p99 (ms):",
                    baseline.run().addedTtftP50Ms(), baseline.run().addedTtftP99Ms(), baseline.baseUrl());
        }
        for (StreamFindings.Finding finding : k.findings()) {
            out.println("Finding " + finding.name() + ": " + finding.message() + ". " + finding.cause());
        }
        if (k.modelTimeMs() != null) {
            out.printf(Locale.ROOT, "Times above are wall-clock; the server runs %sx faster than the modelled GPU. "
                    + "In model time (wall x %s):%n", k.timeScale(), k.timeScale());
            k.modelTimeMs().forEach((metric, m) -> out.printf(Locale.ROOT, "%-40s %.2f / %.2f / %.2f%n",
                    "Model-time " + metric.toUpperCase(Locale.ROOT) + " mean/median/p99 (ms):", m.mean(), m.median(),
                    m.p99()));
        }
        for (String warning : k.warnings()) {
            out.println("Warning: " + warning);
        }
        for (String line : errors.describe()) {
            out.println("Error " + line);
        }
        out.println(valid() ? "Run valid: yes" : "RUN INVALID: " + String.join("; ", invalidReasons()));
        out.println("=".repeat(50));
    }

    /**
     * What the run is judged by, each once (a reason the run is invalid is printed with the verdict at the end): the
     * arrival process, the client's timing error (whose message says whether the latencies can be trusted), and
     * with --strict-timing the send-lag verdict. The machine's noise above is information only.
     */
    private void printVerdicts(ClientKeys k, PrintStream out) {
        RunValidity.Validity validity = k.validity();
        if (validity != null) {
            RunValidity.Arrivals arrivals = validity.arrivals();
            String line = arrivals.judged() ? arrivals.test().message() : "not judged: " + arrivals.reason();
            if (!invalidReasons().contains("the requests did not go out as the requested arrival process: " + line)) {
                out.println("Arrivals: " + line);
            }
            RunValidity.Timing timing = validity.timing();
            if (timing != null && !invalidReasons().contains(timing.message())) {
                out.println((validity.strictTiming()
                        ? "Timing (information: --strict-timing judges send lag): " : "Timing: ") + timing.message());
            }
        }
        RunValidity.LagJudgement verdict = k.sendLagVerdict();
        if (verdict != null && !invalidReasons().contains(verdict.message())) {
            out.println("Send lag: " + verdict.message());
        }
    }

    /** What --scrape-metrics got, so that a wrong URL shows on the console and not only deep in the JSON. */
    private static void printScrape(MetricsScraper.Timeline scraped, PrintStream out) {
        if (scraped == null) {
            return;
        }
        int polls = scraped.timeS().size();
        long failed = scraped.failedPolls();
        boolean anyGauge = false;
        for (List<Double> gauge : List.of(scraped.numRequestsRunning(), scraped.numRequestsWaiting(),
                scraped.kvCacheUsagePerc())) {
            for (Double v : gauge) {
                anyGauge |= v != null;
            }
        }
        String verdict = failed > 0 ? ", first failure: " + scraped.firstFailure()
                : polls > 0 && !anyGauge ? ": no vllm: gauge on the page (is it a vLLM /metrics endpoint?)" : "";
        out.printf(Locale.ROOT, "%-40s %d of %d polls of %s failed%s%n", "Server metrics scrape:", failed,
                polls + failed, scraped.url(), verdict);
    }

    private static String center(String text) {
        int pad = Math.max(0, 50 - text.length());
        return "-".repeat(pad / 2) + text + "-".repeat(pad - pad / 2);
    }
}
