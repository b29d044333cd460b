package dev.infersim.result;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;

import java.nio.file.Path;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A measured (or simulated) run's result, in the schema of {@code vllm bench serve --save-result} (keys and their order
 * as in vllm/benchmarks/serve.py, v0.10): vLLM's run keys, its totals and its latency keys; then infersim's own, all
 * prefixed {@code infersim_}: server-side latencies (queue, prefill, client queue, chunk gaps when a client records
 * them), preemptions, prefix-cache hits, the percentiles' 95% intervals, then the producer's keys (the simulator's
 * saturation verdict and timelines, the client's validity and ground truth); last, with {@code --save-detailed},
 * vLLM's per-request arrays. One flat JSON object, written and read by {@link ResultJson}; shared by the simulator, the
 * benchmark client and the merge of shards, so all write identical schemas.
 *
 * @param serverLatencies    {@code infersim_} latency keys: queue_time, prefill_time, client_queue_time, and icl when
 *                           recorded
 * @param percentileCi95Ms   each reported percentile's 95% interval under its key ({@code median_ttft_ms},
 *                           {@code p99_ttft_ms}), rounded as written; none for a metric without samples
 * @param percentileCiMethod how the intervals are computed ({@link PercentileInterval#METHOD})
 * @param producer           the producer's {@code infersim_} keys, written without the prefix
 * @param details            vLLM's per-request arrays, written after everything else; null without, and when read
 * @param <E>                the producer's keys
 */
@JsonDeserialize(using = FlatRecordReader.class)
public record ServingResult<E>(
        @JsonUnwrapped RunHeader run,
        @JsonUnwrapped RunTotals totals,
        @JsonUnwrapped MetricSummaries latencies,
        @JsonUnwrapped(prefix = INFERSIM) MetricSummaries serverLatencies,
        @JsonProperty(INFERSIM + "preemptions") long preemptions,
        @JsonProperty(INFERSIM + "cached_prompt_tokens") long cachedPromptTokens,
        @JsonProperty(INFERSIM + "prefix_cache_hit_rate") double prefixCacheHitRate,
        @JsonProperty(INFERSIM + "percentile_ci95_ms") Map<String, PercentileInterval> percentileCi95Ms,
        @JsonProperty(INFERSIM + "percentile_ci_method") String percentileCiMethod,
        @JsonUnwrapped(prefix = INFERSIM) E producer,
        @JsonUnwrapped VllmDetailArrays details) {

    /** The prefix of every key infersim adds to vLLM's. */
    public static final String INFERSIM = "infersim_";

    /** infersim's server-side latency metrics, in the order a result lists them. */
    public static final List<String> SERVER_METRICS = List.of("queue_time", "prefill_time", "client_queue_time", "icl");

    /**
     * The result of a measured window of {@code durationNanos} (vLLM's benchmark_duration).
     *
     * @param producer the producer's keys, written after infersim's common ones
     */
    public static <E> ServingResult<E> of(RunInfo info, ServingSummary stats, long durationNanos, E producer) {
        List<Double> percentiles = info.metricPercentiles();
        List<MetricSummary> metrics = info.percentileMetrics().stream()
                .map(m -> MetricSummary.of(m, stats.metric(m), percentiles)).toList();
        List<MetricSummary> server = SERVER_METRICS.stream()
                .filter(m -> !m.equals("icl") || stats.icl().count() > 0)
                .map(m -> MetricSummary.of(m, stats.latency(m), percentiles)).toList();
        Map<String, PercentileInterval> intervals = new LinkedHashMap<>();
        for (String metric : info.percentileMetrics()) {
            LatencyStats s = stats.metric(metric);
            if (s.count() > 0) {
                intervals.put(MetricSummary.key("median", metric), s.percentileInterval(50).rounded());
                for (double p : percentiles) {
                    intervals.put(MetricSummary.percentileKey(p, metric), s.percentileInterval(p).rounded());
                }
            }
        }
        return new ServingResult<>(RunHeader.of(info), RunTotals.of(stats, durationNanos / 1e9),
                new MetricSummaries(metrics), new MetricSummaries(server), stats.preemptions(),
                stats.cachedPromptTokens(),
                stats.inputTokens() == 0 ? 0.0 : (double) stats.cachedPromptTokens() / stats.inputTokens(),
                intervals, PercentileInterval.METHOD, producer, null);
    }

    /**
     * A result file read back, the producer's keys as {@code producerType}; without vLLM's per-request arrays. Throws
     * {@link java.io.UncheckedIOException} with one line naming the file and what is wrong.
     */
    public static <E> ServingResult<E> read(Path file, Class<E> producerType) {
        return ResultJson.read(file, ResultJson.mapper().getTypeFactory()
                .constructParametricType(ServingResult.class, producerType));
    }

    /** This result with other producer keys. */
    public <F> ServingResult<F> withProducer(F keys) {
        return new ServingResult<>(run, totals, latencies, serverLatencies, preemptions, cachedPromptTokens,
                prefixCacheHitRate, percentileCi95Ms, percentileCiMethod, keys, details);
    }

    /** This result with vLLM's per-request arrays after its keys. */
    public ServingResult<E> withDetails(VllmDetailArrays arrays) {
        return new ServingResult<>(run, totals, latencies, serverLatencies, preemptions, cachedPromptTokens,
                prefixCacheHitRate, percentileCi95Ms, percentileCiMethod, producer, arrays);
    }

    /** The named vLLM metric's summary (ttft, tpot, itl, e2el); null when the run reported no percentiles of it. */
    public MetricSummary metric(String name) {
        return latencies.metric(name);
    }

    /** The named server-side latency's summary ({@link #SERVER_METRICS}); null when the result has none. */
    public MetricSummary serverLatency(String name) {
        return serverLatencies.metric(name);
    }

    /** The 95% interval of a percentile under its vLLM key ({@code p99_ttft_ms}); null where the result has none. */
    public PercentileInterval interval(String key) {
        return percentileCi95Ms == null ? null : percentileCi95Ms.get(key);
    }
}
