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
    private final long durationNanos;

    private BenchmarkReport(RunInfo info, ServingSummary stats, long durationNanos, Map<String, Object> fields) {
        this.info = info;
        this.stats = stats;
        this.durationNanos = durationNanos;
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
        return new BenchmarkReport(info, stats, durationNanos, f);
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

    /** Prints vLLM's "Serving Benchmark Result" block, as {@link ServingReport#printSummary} does for a typed result. */
    public void printSummary(PrintStream out) {
        ServingReport.of(info, stats, durationNanos, null).printSummary(out);
    }
}
