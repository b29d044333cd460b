package dev.infersim.result;

import java.util.List;

/**
 * One latency metric as a result states it, in milliseconds: its mean, median, standard deviation and percentiles,
 * each null where the result does not give it (a prediction has no deviation; a closed loop's only a mean). Written
 * flat under vLLM's keys by {@link MetricSummaries}: {@code mean_ttft_ms}, {@code median_ttft_ms}, {@code std_ttft_ms},
 * {@code p99_ttft_ms}.
 *
 * @param metric      the metric's name in the keys (ttft, tpot, itl, e2el; queue_time and the like for infersim's)
 * @param percentiles in the order the result lists them
 */
public record MetricSummary(String metric, Double meanMs, Double medianMs, Double stdMs, List<Percentile> percentiles) {

    public MetricSummary {
        percentiles = List.copyOf(percentiles);
    }

    /** A percentile and its value. */
    public record Percentile(double percentile, double valueMs) {
    }

    /** Mean, median, deviation and {@code percentiles} of measured samples, as vLLM writes them. */
    public static MetricSummary of(String metric, LatencyStats s, List<Double> percentiles) {
        return new MetricSummary(metric, s.meanMs(), s.medianMs(), s.stdMs(),
                percentiles.stream().map(p -> new Percentile(p, s.percentileMs(p))).toList());
    }

    /** The value at {@code percentile}; NaN when the result lists none there. */
    public double percentileMs(double percentile) {
        for (Percentile p : percentiles) {
            if (p.percentile() == percentile) {
                return p.valueMs();
            }
        }
        return Double.NaN;
    }

    /** vLLM's key of a statistic: {@code mean_ttft_ms}, {@code median_ttft_ms}. */
    public static String key(String statistic, String metric) {
        return statistic + "_" + metric + "_ms";
    }

    /** vLLM's key of a percentile: {@code p99_ttft_ms}, {@code p99.9_ttft_ms}. */
    public static String percentileKey(double percentile, String metric) {
        return key("p" + RunInfo.percentileWord(percentile), metric);
    }
}
