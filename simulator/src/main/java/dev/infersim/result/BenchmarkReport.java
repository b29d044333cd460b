package dev.infersim.result;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonSerializable;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;

import java.io.IOException;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A benchmark result in the schema of {@code vllm bench serve --save-result} (keys and their order as in
 * vllm/benchmarks/serve.py), followed by infersim's own keys, all prefixed {@code infersim_}: server-side queue and
 * prefill time, client semaphore wait, chunk gaps (when a client records them), preemptions, prefix-cache hits, plus
 * whatever the producer adds
 * (the simulator's saturation verdict and timelines). The same class writes the console summary block vLLM prints.
 * Shared by the simulator and the benchmark client so both write identical schemas.
 */
public final class BenchmarkReport {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);

    private final Map<String, Object> fields;
    private final RunInfo info;
    private final ServingSummary stats;
    private final double durationS;

    private BenchmarkReport(RunInfo info, ServingSummary stats, double durationS, Map<String, Object> fields) {
        this.info = info;
        this.stats = stats;
        this.durationS = durationS;
        this.fields = fields;
    }

    /**
     * Builds the result.
     *
     * @param durationNanos length of the measured window (vLLM's benchmark_duration)
     * @param extra         producer-specific keys, appended in their order; names should start with {@code infersim_}
     */
    public static BenchmarkReport of(RunInfo info, ServingSummary stats, long durationNanos, Map<String, Object> extra) {
        double durationS = durationNanos / 1e9;
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("date", info.date());
        f.put("backend", info.backend());
        f.put("model_id", info.modelId());
        f.put("tokenizer_id", info.tokenizerId());
        f.put("num_prompts", info.numPrompts());
        f.put("request_rate", Double.isInfinite(info.requestRatePerS()) ? "inf" : info.requestRatePerS());
        f.put("burstiness", info.burstiness());
        f.put("max_concurrency", info.maxConcurrency() > 0 ? info.maxConcurrency() : null);
        if (info.rampUp() != null) {
            f.put("ramp_up_strategy", info.rampUp().strategy().name().toLowerCase(Locale.ROOT));
            f.put("ramp_up_start_rps", info.rampUp().startRps());
            f.put("ramp_up_end_rps", info.rampUp().endRps());
        }
        f.put("duration", durationS);
        f.put("completed", stats.completed());
        f.put("failed", stats.failed());
        f.put("total_input_tokens", stats.inputTokens());
        f.put("total_output_tokens", stats.outputTokens());
        f.put("request_throughput", perSecond(stats.completed(), durationS));
        f.put("request_goodput", stats.measuresGoodput() ? perSecond(stats.goodRequests(), durationS) : null);
        f.put("output_throughput", perSecond(stats.outputTokens(), durationS));
        f.put("total_token_throughput", perSecond(stats.inputTokens() + stats.outputTokens(), durationS));
        f.put("max_output_tokens_per_s", stats.maxOutputTokensPerS() < 0 ? null : (double) stats.maxOutputTokensPerS());
        f.put("max_concurrent_requests", stats.maxConcurrentRequests() < 0 ? null : stats.maxConcurrentRequests());
        Map<String, Object> intervals = new LinkedHashMap<>();
        for (String metric : info.percentileMetrics()) {
            putStats(f, "", metric, stats.metric(metric), info.metricPercentiles());
            putIntervals(intervals, metric, stats.metric(metric), info.metricPercentiles());
        }
        putStats(f, "infersim_", "queue_time", stats.queueTime(), info.metricPercentiles());
        putStats(f, "infersim_", "prefill_time", stats.prefillTime(), info.metricPercentiles());
        putStats(f, "infersim_", "client_queue_time", stats.clientQueueTime(), info.metricPercentiles());
        if (stats.icl().count() > 0) {
            putStats(f, "infersim_", "icl", stats.icl(), info.metricPercentiles());
        }
        f.put("infersim_preemptions", stats.preemptions());
        f.put("infersim_cached_prompt_tokens", stats.cachedPromptTokens());
        f.put("infersim_prefix_cache_hit_rate",
                stats.inputTokens() == 0 ? 0.0 : (double) stats.cachedPromptTokens() / stats.inputTokens());
        f.put("infersim_percentile_ci95_ms", intervals);
        f.put("infersim_percentile_ci_method", PercentileInterval.METHOD);
        f.putAll(extra);
        return new BenchmarkReport(info, stats, durationS, f);
    }

    private static double perSecond(long count, double seconds) {
        return seconds > 0 ? count / seconds : 0;
    }

    private static void putStats(Map<String, Object> f, String prefix, String metric, LatencyStats s, List<Double> percentiles) {
        f.put(prefix + "mean_" + metric + "_ms", s.meanMs());
        f.put(prefix + "median_" + metric + "_ms", s.medianMs());
        f.put(prefix + "std_" + metric + "_ms", s.stdMs());
        for (double p : percentiles) {
            f.put(prefix + "p" + RunInfo.percentileWord(p) + "_" + metric + "_ms", s.percentileMs(p));
        }
    }

    /** Each percentile's interval under its own key ({@code median_ttft_ms}, {@code p99_ttft_ms}); none without samples. */
    private static void putIntervals(Map<String, Object> out, String metric, LatencyStats s, List<Double> percentiles) {
        if (s.count() == 0) {
            return;
        }
        out.put("median_" + metric + "_ms", s.percentileInterval(50).toJson());
        for (double p : percentiles) {
            out.put("p" + RunInfo.percentileWord(p) + "_" + metric + "_ms", s.percentileInterval(p).toJson());
        }
    }

    /** The result as an ordered map (JSON object). */
    public Map<String, Object> fields() {
        return fields;
    }

    /** Writes the result as pretty-printed JSON, creating parent directories; whole or not at all ({@link OutputFile}). */
    public void write(Path file) {
        OutputFile.write(file, out -> JSON.writeValue(out, fields));
    }

    /**
     * Writes the result followed by vLLM's per-request arrays, which only the file gets (they stream themselves from
     * the run's per-request file as they are written).
     */
    public void write(Path file, VllmDetailArrays details) {
        OutputFile.write(file, out -> JSON.writeValue(out, withDetails(fields, details)));
    }

    /** A result's keys followed by vLLM's per-request arrays, as one JSON object. */
    public static JsonSerializable withDetails(Map<String, Object> fields, VllmDetailArrays details) {
        return new JsonSerializable.Base() {
            @Override
            public void serialize(JsonGenerator json, SerializerProvider provider) throws IOException {
                json.writeStartObject();
                for (Map.Entry<String, Object> e : fields.entrySet()) {
                    json.writeFieldName(e.getKey());
                    provider.defaultSerializeValue(e.getValue(), json);
                }
                provider.findValueSerializer(VllmDetailArrays.class).serialize(details, json, provider);
                json.writeEndObject();
            }

            @Override
            public void serializeWithType(JsonGenerator json, SerializerProvider provider, TypeSerializer type)
                    throws IOException {
                serialize(json, provider);
            }
        };
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
        line(out, "Benchmark duration (s):", durationS);
        line(out, "Total input tokens:", stats.inputTokens());
        line(out, "Total generated tokens:", stats.outputTokens());
        line(out, "Request throughput (req/s):", (double) fields.get("request_throughput"));
        if (stats.measuresGoodput()) {
            line(out, "Request goodput (req/s):", (double) fields.get("request_goodput"));
        }
        line(out, "Output token throughput (tok/s):", (double) fields.get("output_throughput"));
        if (stats.maxOutputTokensPerS() >= 0) {
            line(out, "Peak output token throughput (tok/s):", (double) stats.maxOutputTokensPerS());
            line(out, "Peak concurrent requests:", (double) stats.maxConcurrentRequests());
        }
        line(out, "Total Token throughput (tok/s):", (double) fields.get("total_token_throughput"));
        for (String metric : info.percentileMetrics()) {
            printMetric(out, metric);
        }
        // Only an infersim server (or the simulator) reports queue times; from any other server the block would be
        // all zeros that read as measurements.
        if (stats.queueTime().count() > 0) {
            out.println(center("Server side (infersim)", '-'));
            line(out, "Mean queue time (ms):", stats.queueTime().meanMs());
            line(out, "Mean prefill time (ms):", stats.prefillTime().meanMs());
            line(out, "Prefix cache hit rate:", (double) fields.get("infersim_prefix_cache_hit_rate"));
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
