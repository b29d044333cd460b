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

    /** vLLM's summary block, then send lag, errors, ground-truth error and validity. */
    @SuppressWarnings("unchecked")
    public void printSummary(PrintStream out) {
        report.printSummary(out);
        Map<String, Object> f = fields();
        Map<String, Object> lag = (Map<String, Object>) f.get("infersim_send_lag_ms");
        out.println(center("Client (infersim)"));
        out.printf(Locale.ROOT, "%-40s %.3f / %.3f / %.3f%n", "Send lag p50 / p99 / max (ms):", lag.get("p50"),
                lag.get("p99"), lag.get("max"));
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
        Map<String, Object> verdict = (Map<String, Object>) f.get("infersim_send_lag_verdict");
        if (verdict != null && !invalidReasons.contains(verdict.get("message"))) {
            out.println("Send lag: " + verdict.get("message"));
        }
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
