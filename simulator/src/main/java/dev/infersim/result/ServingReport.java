package dev.infersim.result;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * A run's {@link ServingResult} with what its console summary needs beyond the file (the latency samples' counts
 * and exact intervals): writes the result file and prints the summary block vLLM prints, so that simulate, bench and
 * merge print alike.
 *
 * @param <E> the producer's keys in the result
 */
public final class ServingReport<E> {
    private final RunInfo info;
    private final ServingSummary stats;
    private final ServingResult<E> result;

    private ServingReport(RunInfo info, ServingSummary stats, ServingResult<E> result) {
        this.info = info;
        this.stats = stats;
        this.result = result;
    }

    /**
     * Builds the result.
     *
     * @param durationNanos length of the measured window (vLLM's benchmark_duration)
     * @param producer      the producer's keys, written after infersim's common ones
     */
    public static <E> ServingReport<E> of(RunInfo info, ServingSummary stats, long durationNanos, E producer) {
        return new ServingReport<>(info, stats, ServingResult.of(info, stats, durationNanos, producer));
    }

    /** The result, as its file holds it. */
    public ServingResult<E> result() {
        return result;
    }

    /** The producer's keys. */
    public E producer() {
        return result.producer();
    }

    /** This report with other producer keys. */
    public ServingReport<E> withProducer(E keys) {
        return new ServingReport<>(info, stats, result.withProducer(keys));
    }

    /** Writes the result as pretty-printed JSON, creating parent directories; whole or not at all ({@link OutputFile}). */
    public void write(Path file) {
        ResultJson.write(file, result);
    }

    /**
     * Writes the result followed by vLLM's per-request arrays, which only the file gets (they stream themselves from
     * the run's per-request file as they are written).
     */
    public void write(Path file, VllmDetailArrays details) {
        ResultJson.write(file, result.withDetails(details));
    }

    /** vLLM's default file name for this result; see {@link RunInfo#defaultResultFileName()}. */
    public String defaultFileName() {
        return info.defaultResultFileName();
    }

    /** Prints vLLM's "Serving Benchmark Result" block, then infersim's server-side lines when the server sent them. */
    public void printSummary(PrintStream out) {
        out.println(center(" Serving Benchmark Result ", '='));
        line(out, "Successful requests:", stats.completed());
        line(out, "Failed requests:", stats.failed());
        if (info.maxConcurrency() > 0) {
            line(out, "Maximum request concurrency:", info.maxConcurrency());
        }
        if (!Double.isInfinite(info.requestRatePerS())) {
            line(out, "Request rate configured (RPS):", info.requestRatePerS());
        }
        RunTotals totals = result.totals();
        line(out, "Benchmark duration (s):", totals.duration());
        line(out, "Total input tokens:", stats.inputTokens());
        line(out, "Total generated tokens:", stats.outputTokens());
        line(out, "Request throughput (req/s):", totals.requestThroughput());
        if (stats.measuresGoodput()) {
            line(out, "Request goodput (req/s):", totals.requestGoodput());
        }
        line(out, "Output token throughput (tok/s):", totals.outputThroughput());
        if (stats.maxOutputTokensPerS() >= 0) {
            line(out, "Peak output token throughput (tok/s):", (double) stats.maxOutputTokensPerS());
            line(out, "Peak concurrent requests:", (double) stats.maxConcurrentRequests());
        }
        line(out, "Total Token throughput (tok/s):", totals.totalTokenThroughput());
        for (String metric : info.percentileMetrics()) {
            printMetric(out, metric);
        }
        // Only an infersim server (or the simulator) reports queue times; from any other server the block would be
        // all zeros that read as measurements.
        if (stats.queueTime().count() > 0) {
            out.println(center("Server side (infersim)", '-'));
            line(out, "Mean queue time (ms):", stats.queueTime().meanMs());
            line(out, "Mean prefill time (ms):", stats.prefillTime().meanMs());
            line(out, "Prefix cache hit rate:", result.prefixCacheHitRate());
            line(out, "Preemptions:", stats.preemptions());
        }
        out.println("=".repeat(50));
    }

    private void printMetric(PrintStream out, String metric) {
        String label = metric.toUpperCase(Locale.ROOT);
        String header = switch (metric) {
            case "ttft" -> "Time to First Token";
            case "tpot" -> "Time per Output Token (excl. 1st token)";
            case "itl" -> "Inter-token Latency";
            default -> "End-to-end Latency";
        };
        LatencyStats s = stats.metric(metric);
        out.println(center(header, '-'));
        line(out, "Mean " + label + " (ms):", s.meanMs());
        percentileLine(out, "Median " + label + " (ms):", s, 50);
        for (double p : info.metricPercentiles()) {
            percentileLine(out, "P" + RunInfo.percentileWord(p) + " " + label + " (ms):", s, p);
        }
    }

    /** vLLM's line, then the 95% interval after the value's column (vLLM's readers take the first number). */
    private static void percentileLine(PrintStream out, String label, LatencyStats s, double percentile) {
        PercentileInterval i = s.percentileInterval(percentile);
        String interval = i == null ? "" : String.format(Locale.ROOT, " 95%% CI %.2f-%s", i.lowMs(),
                i.bounded() ? String.format(Locale.ROOT, "%.2f", i.highMs()) : "? (too few samples beyond it)");
        out.printf(Locale.ROOT, "%-40s %-10.2f%s%n", label, s.percentileMs(percentile), interval);
    }

    private static String center(String text, char fill) {
        int pad = Math.max(0, 50 - text.length());
        int left = pad / 2;
        return String.valueOf(fill).repeat(left) + text + String.valueOf(fill).repeat(pad - left);
    }

    private static void line(PrintStream out, String label, long value) {
        out.printf(Locale.ROOT, "%-40s %-10d%n", label, value);
    }

    private static void line(PrintStream out, String label, double value) {
        out.printf(Locale.ROOT, "%-40s %-10.2f%n", label, value);
    }
}
