package dev.infersim.bench;

import dev.infersim.result.BenchmarkReport;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One measured run: the vLLM-schema report (with infersim's client keys), the errors by type, and why the run is
 * invalid if it is (send lag over the limit, interrupted). Prints vLLM's console block followed by the client's own.
 *
 * @param report         the result in vLLM's schema
 * @param errors         failures by type
 * @param invalidReasons empty when the run's numbers can be trusted
 */
public record BenchResult(BenchmarkReport report, ErrorTally errors, List<String> invalidReasons) {

    public BenchResult {
        invalidReasons = List.copyOf(invalidReasons);
    }

    public Map<String, Object> fields() {
        return report.fields();
    }

    public boolean valid() {
        return invalidReasons.isEmpty();
    }

    /** Whether any request came with the server's ground truth (the {@code infersim} object of the mock). */
    @SuppressWarnings("unchecked")
    public boolean hasGroundTruth() {
        return ((Number) ((Map<String, Object>) fields().get("infersim_ground_truth")).get("requests")).longValue() > 0;
    }

    /** This result with one more reason it is invalid, recorded in the report's fields as well. */
    public BenchResult invalidatedBy(String reason) {
        List<String> reasons = new ArrayList<>(invalidReasons);
        reasons.add(reason);
        fields().put("infersim_valid", false);
        fields().put("infersim_invalid_reasons", reasons);
        return new BenchResult(report, errors, reasons);
    }

    /**
     * This result judged against a direct run to one replica behind the same gateway ({@code --baseline-url}): the
     * baseline's ground-truth error is kept as {@code infersim_baseline}, and the findings are drawn again, now with
     * the gateway's added latency.
     */
    @SuppressWarnings("unchecked")
    public BenchResult withBaseline(BenchResult baseline, String baselineUrl) {
        Map<String, Object> truth = (Map<String, Object>) fields().get("infersim_ground_truth");
        Map<String, Object> direct = (Map<String, Object>) baseline.fields().get("infersim_ground_truth");
        Map<String, Object> b = new java.util.LinkedHashMap<>();
        b.put("base_url", baselineUrl);
        b.put("request_rate", baseline.fields().get("request_rate"));
        b.put("completed", baseline.fields().get("completed"));
        b.put("valid", baseline.valid());
        b.put("infersim_ground_truth", direct);
        double[] added = StreamFindings.addedTtftMs(truth, direct);
        b.put("added_ttft_p50_ms", added == null ? null : added[0]);
        b.put("added_ttft_p99_ms", added == null ? null : added[1]);
        fields().put("infersim_baseline", b);
        fields().put("infersim_findings", StreamFindings.toJson(StreamFindings.of(truth, direct)));
        return this;
    }

    /** vLLM's summary block, then send lag, errors, ground-truth error and validity. */
    @SuppressWarnings("unchecked")
    public void printSummary(PrintStream out) {
        report.printSummary(out);
        Map<String, Object> f = fields();
        Map<String, Object> lag = (Map<String, Object>) f.get("infersim_send_lag_ms");
        out.println(center("Client (infersim)"));
        out.printf(Locale.ROOT, "%-40s %.3f / %.3f / %.3f%n", "Send lag p50 / p99 / max (ms):", lag.get("p50"),
                lag.get("p99"), lag.get("max"));
        Map<String, Object> reads = (Map<String, Object>) f.get("infersim_read_delay_ms");
        if (reads != null && ((Number) reads.get("samples")).longValue() > 0) {
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f / %.3f%n", "Read delay p50 / p99 / max (ms):", reads.get("p50"),
                    reads.get("p99"), reads.get("max"));
        }
        Map<String, Object> noise = (Map<String, Object>) f.get("infersim_scheduling_noise_ms");
        if (noise != null) {
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f%n", "Machine noise p99, idle / in run (ms):",
                    ((Map<String, Object>) noise.get("calibration")).get("p99"),
                    ((Map<String, Object>) noise.get("during_run")).get("p99"));
        }
        Map<String, Object> gc = (Map<String, Object>) f.get("infersim_client_gc");
        if (gc != null) {
            out.printf(Locale.ROOT, "%-40s %s / %s%n", "Client GC in run, collections / ms:", gc.get("collections"),
                    gc.get("time_ms"));
        }
        Map<String, Object> loops = (Map<String, Object>) f.get("infersim_client_loops_ms");
        if (loops != null) {
            out.printf(Locale.ROOT, "%-40s %.0f / %.0f%n", "Client event loops on / waiting for CPU (ms):",
                    loops.get("on_cpu"), loops.get("waiting_for_cpu"));
        }
        printVerdicts(f, out);
        out.printf(Locale.ROOT, "%-40s %s / %.1f%n", "Max / mean requests in flight:", f.get("infersim_max_in_flight"),
                f.get("infersim_mean_in_flight"));
        out.println("  (in flight: at one instant, as the client counts them; \"Peak concurrent requests\" above is "
                + "vLLM's: requests active at any time within the same one-second bin)");
        long cancelled = (long) f.get("infersim_cancelled");
        if (cancelled > 0) {
            out.printf(Locale.ROOT, "%-40s %d of %d sent%n", "Cancelled in flight by the interrupt:", cancelled,
                    f.get("infersim_sent"));
        }
        long mismatches = (long) f.get("infersim_prompt_token_mismatches");
        if (mismatches > 0) {
            out.printf(Locale.ROOT, "%-40s %d (max %d tokens)%n", "Prompt length mismatches (server usage):",
                    mismatches, f.get("infersim_prompt_token_mismatch_max_tokens"));
        }
        printScrape((Map<String, Object>) f.get("infersim_server_metrics"), out);
        Map<String, Object> truth = (Map<String, Object>) f.get("infersim_ground_truth");
        if (hasGroundTruth()) {
            Map<String, Object> ttft = (Map<String, Object>) truth.get("ttft_abs_error_ms");
            Map<String, Object> e2el = (Map<String, Object>) truth.get("e2el_abs_error_ms");
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f / %.3f%n", "TTFT error vs server p50/p99/max (ms):",
                    ttft.get("p50"), ttft.get("p99"), ttft.get("max"));
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f / %.3f%n", "E2EL error vs server p50/p99/max (ms):",
                    e2el.get("p50"), e2el.get("p99"), e2el.get("max"));
            Map<String, Object> spread = (Map<String, Object>) truth.getOrDefault("requests_per_replica", Map.of());
            if (spread.size() > 1) {
                StringBuilder line = new StringBuilder();
                spread.forEach((replica, n) -> line.append(line.length() == 0 ? "" : ", ").append(replica).append(": ").append(n));
                out.printf(Locale.ROOT, "%-40s %s%n", "Requests per replica:", line);
                Map<String, Object> perReplica = (Map<String, Object>) truth.getOrDefault("per_replica", Map.of());
                StringBuilder times = new StringBuilder();
                perReplica.forEach((replica, o) -> {
                    Map<String, Object> r = (Map<String, Object>) o;
                    times.append(times.length() == 0 ? "" : ", ").append(replica).append(": ")
                            .append(String.format(Locale.ROOT, "%.1f", ((Number) r.get("mean_ttft_ms")).doubleValue()));
                    if (r.get("mean_queue_ms") != null) {
                        times.append(String.format(Locale.ROOT, " / %.1f", ((Number) r.get("mean_queue_ms")).doubleValue()));
                    }
                });
                out.printf(Locale.ROOT, "%-40s %s%n", "Server TTFT / queue per replica (ms):", times);
            }
        }
        Map<String, Object> baseline = (Map<String, Object>) f.get("infersim_baseline");
        if (baseline != null && baseline.get("added_ttft_p50_ms") != null) {
            out.printf(Locale.ROOT, "%-40s %.3f / %.3f (direct to %s)%n", "Gateway's added TTFT p50 / p99 (ms):",
                    baseline.get("added_ttft_p50_ms"), baseline.get("added_ttft_p99_ms"), baseline.get("base_url"));
        }
        for (Object o : (List<?>) f.getOrDefault("infersim_findings", List.of())) {
            Map<String, Object> finding = (Map<String, Object>) o;
            out.println("Finding " + finding.get("name") + ": " + finding.get("message") + ". " + finding.get("cause"));
        }
        Object scale = f.get("infersim_time_scale");
        Map<String, Object> model = (Map<String, Object>) f.get("infersim_model_time_ms");
        if (model != null) {
            out.printf(Locale.ROOT, "Times above are wall-clock; the server runs %sx faster than the modelled GPU. "
                    + "In model time (wall x %s):%n", scale, scale);
            model.forEach((metric, v) -> {
                Map<String, Object> m = (Map<String, Object>) v;
                out.printf(Locale.ROOT, "%-40s %.2f / %.2f / %.2f%n", "Model-time " + metric.toUpperCase(Locale.ROOT)
                        + " mean/median/p99 (ms):", m.get("mean"), m.get("median"), m.get("p99"));
            });
        }
        for (Object warning : (List<?>) f.getOrDefault("infersim_warnings", List.of())) {
            out.println("Warning: " + warning);
        }
        for (String line : errors.describe()) {
            out.println("Error " + line);
        }
        out.println(valid() ? "Run valid: yes" : "RUN INVALID: " + String.join("; ", invalidReasons));
        out.println("=".repeat(50));
    }

    /**
     * What the run is judged by, each once (a reason the run is invalid is printed with the verdict at the end): the
     * arrival process, the client's timing error (whose message says whether the latencies can be trusted), and
     * with --strict-timing the send-lag verdict. The machine's noise above is information only.
     */
    @SuppressWarnings("unchecked")
    private void printVerdicts(Map<String, Object> f, PrintStream out) {
        Map<String, Object> validity = (Map<String, Object>) f.get("infersim_validity");
        if (validity != null) {
            Map<String, Object> arrivals = (Map<String, Object>) validity.get("arrivals");
            String line = Boolean.TRUE.equals(arrivals.get("judged")) ? (String) arrivals.get("message")
                    : "not judged: " + arrivals.get("reason");
            if (!invalidReasons.contains("the requests did not go out as the requested arrival process: " + line)) {
                out.println("Arrivals: " + line);
            }
            Map<String, Object> timing = (Map<String, Object>) validity.get("timing");
            if (timing != null && !invalidReasons.contains(timing.get("message"))) {
                out.println((Boolean.TRUE.equals(validity.get("strict_timing"))
                        ? "Timing (information: --strict-timing judges send lag): " : "Timing: ") + timing.get("message"));
            }
        }
        Map<String, Object> verdict = (Map<String, Object>) f.get("infersim_send_lag_verdict");
        if (verdict != null && !invalidReasons.contains(verdict.get("message"))) {
            out.println("Send lag: " + verdict.get("message"));
        }
    }

    /** What --scrape-metrics got, so that a wrong URL shows on the console and not only deep in the JSON. */
    private static void printScrape(Map<String, Object> scraped, PrintStream out) {
        if (scraped == null) {
            return;
        }
        int polls = ((Object[]) scraped.get("time_s")).length;
        long failed = ((Number) scraped.get("failed_polls")).longValue();
        boolean anyGauge = false;
        for (String gauge : List.of("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc")) {
            for (Object v : (Object[]) scraped.get(gauge)) {
                anyGauge |= v != null;
            }
        }
        String verdict = failed > 0 ? ", first failure: " + scraped.get("first_failure")
                : polls > 0 && !anyGauge ? ": no vllm: gauge on the page (is it a vLLM /metrics endpoint?)" : "";
        out.printf(Locale.ROOT, "%-40s %d of %d polls of %s failed%s%n", "Server metrics scrape:", failed,
                polls + failed, scraped.get("url"), verdict);
    }

    private static String center(String text) {
        int pad = Math.max(0, 50 - text.length());
        return "-".repeat(pad / 2) + text + "-".repeat(pad - pad / 2);
    }
}
