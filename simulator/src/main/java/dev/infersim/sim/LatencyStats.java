package dev.infersim.sim;

import org.HdrHistogram.Histogram;

/**
 * Summary statistics of one latency metric, reported in milliseconds as {@code vllm bench serve} reports them: mean,
 * median, population standard deviation ({@code numpy.std}) and percentiles.
 *
 * <p>Mean and standard deviation are exact (Welford's online algorithm, Knuth TAOCP vol. 2, 4.2.2). Percentiles come
 * from an HdrHistogram with 3 significant digits (relative error at most 0.1%), so memory stays constant however many
 * samples are recorded; vLLM interpolates exact samples ({@code numpy.percentile}), which differs by less than one
 * histogram bucket. Recording allocates nothing. Not thread-safe.
 */
public final class LatencyStats {
    private static final long LOWEST_DISCERNIBLE_NANOS = 1_000;
    private static final long HIGHEST_TRACKABLE_NANOS = 3_600_000_000_000L;

    private final Histogram histogram;
    private long count;
    private double meanNanos;
    private double sumSquaredDeviations;
    private long maxNanos;

    public LatencyStats() {
        histogram = new Histogram(LOWEST_DISCERNIBLE_NANOS, HIGHEST_TRACKABLE_NANOS, 3);
        histogram.setAutoResize(true);
    }

    /** Adds one sample; negative values are a caller bug. */
    public void record(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("latency must be >= 0 ns, got " + nanos);
        }
        histogram.recordValue(nanos);
        count++;
        double delta = nanos - meanNanos;
        meanNanos += delta / count;
        sumSquaredDeviations += delta * (nanos - meanNanos);
        if (nanos > maxNanos) {
            maxNanos = nanos;
        }
    }

    public long count() {
        return count;
    }

    /** Mean in ms; 0 without samples, as vLLM reports empty metrics. */
    public double meanMs() {
        return meanNanos / 1e6;
    }

    /** Population standard deviation in ms. */
    public double stdMs() {
        return count == 0 ? 0 : Math.sqrt(sumSquaredDeviations / count) / 1e6;
    }

    public double medianMs() {
        return percentileMs(50);
    }

    /** The {@code percentile}-th percentile (0..100] in ms; 0 without samples. */
    public double percentileMs(double percentile) {
        if (!(percentile > 0 && percentile <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], got " + percentile);
        }
        return count == 0 ? 0 : histogram.getValueAtPercentile(percentile) / 1e6;
    }

    public double maxMs() {
        return maxNanos / 1e6;
    }
}
