package dev.infersim.result;

import org.HdrHistogram.Histogram;

/**
 * Summary statistics of one latency metric, reported in milliseconds as {@code vllm bench serve} reports them: mean,
 * median, population standard deviation ({@code numpy.std}) and percentiles.
 *
 * <p>Mean and standard deviation are exact up to rounding: sums of the samples and their squares shifted by the first
 * sample (the shifted-data algorithm, Chan, Golub and LeVeque 1983), which avoids both the cancellation of raw sums of
 * squares and a division per sample. Percentiles come
 * from an HdrHistogram with 3 significant digits (relative error at most 0.1%), so memory stays constant however many
 * samples are recorded; vLLM interpolates exact samples ({@code numpy.percentile}), which differs by less than one
 * histogram bucket. Each percentile comes with a 95% confidence interval ({@link #percentileInterval}) from
 * {@link PercentileSections}: sectioning over the samples in the order they were recorded, so the correlation of
 * latencies in a queue widens it. Recording allocates nothing once the histograms are sized. Not thread-safe.
 */
public final class LatencyStats {
    private static final long LOWEST_DISCERNIBLE_NANOS = 1;
    private static final long HIGHEST_TRACKABLE_NANOS = 3_600_000_000_000L;

    private final Histogram histogram;
    /** The samples in recording order, for intervals; null once that order is lost (restored or added statistics). */
    private PercentileSections sections = new PercentileSections();
    private long count;
    private long shiftNanos;
    private double sumShifted;
    private double sumShiftedSquares;
    private long maxNanos;

    public LatencyStats() {
        histogram = new Histogram(LOWEST_DISCERNIBLE_NANOS, HIGHEST_TRACKABLE_NANOS, 3);
        histogram.setAutoResize(true);
    }

    /** Adds one sample; negative values are a caller bug. */
    public void record(long nanos) {
        record(nanos, 1);
    }

    /** Adds {@code samples} equal samples at once (a batch step gives many tokens the same gap). */
    public void record(long nanos, long samples) {
        if (nanos < 0 || samples < 1) {
            throw new IllegalArgumentException("need a latency >= 0 ns and >= 1 sample, got " + nanos + " ns x " + samples);
        }
        histogram.recordValueWithCount(nanos, samples);
        sections.record(nanos, samples);
        if (count == 0) {
            shiftNanos = nanos;
        }
        count += samples;
        double shifted = nanos - shiftNanos;
        sumShifted += shifted * samples;
        sumShiftedSquares += shifted * shifted * samples;
        if (nanos > maxNanos) {
            maxNanos = nanos;
        }
    }

    /**
     * Statistics restored from a shard's histogram (nanoseconds) and the exact mean and standard deviation it reported
     * beside it, so that {@link #add} of restored shards gives the percentiles of the summed histograms and the exact
     * pooled mean and deviation.
     */
    public static LatencyStats restored(Histogram samples, double meanMs, double stdMs) {
        LatencyStats s = new LatencyStats();
        s.sections = null;
        s.histogram.add(samples);
        s.count = samples.getTotalCount();
        if (s.count > 0) {
            double meanNanos = meanMs * 1e6;
            s.shiftNanos = Math.round(meanNanos);
            double offset = meanNanos - s.shiftNanos;
            double stdNanos = stdMs * 1e6;
            s.sumShifted = offset * s.count;
            s.sumShiftedSquares = (stdNanos * stdNanos + offset * offset) * s.count;
            s.maxNanos = samples.getMaxValue();
        }
        return s;
    }

    /**
     * Adds another's samples: its histogram to this one's, its sums shifted to this one's shift (exact pooling). The
     * samples' order is lost, so intervals are then those for independent samples.
     */
    public void add(LatencyStats other) {
        if (other.count == 0) {
            return;
        }
        histogram.add(other.histogram);
        sections = null;
        if (count == 0) {
            shiftNanos = other.shiftNanos;
        }
        double delta = other.shiftNanos - shiftNanos;
        sumShifted += other.sumShifted + delta * other.count;
        sumShiftedSquares += other.sumShiftedSquares + 2 * delta * other.sumShifted + delta * delta * other.count;
        count += other.count;
        maxNanos = Math.max(maxNanos, other.maxNanos);
    }

    /** A copy of the samples' histogram, in nanoseconds (for an HdrHistogram log). */
    public Histogram histogram() {
        return histogram.copy();
    }

    public long count() {
        return count;
    }

    /** Mean in ms; 0 without samples, as vLLM reports empty metrics. */
    public double meanMs() {
        return count == 0 ? 0 : (shiftNanos + sumShifted / count) / 1e6;
    }

    /** Population standard deviation in ms. */
    public double stdMs() {
        if (count == 0) {
            return 0;
        }
        double meanShifted = sumShifted / count;
        return Math.sqrt(Math.max(0, sumShiftedSquares / count - meanShifted * meanShifted)) / 1e6;
    }

    public double medianMs() {
        return percentileMs(50);
    }

    /** The {@code percentile}-th percentile (0..100] in ms; 0 without samples. */
    public double percentileMs(double percentile) {
        if (!(percentile > 0 && percentile <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], got " + percentile);
        }
        // The histogram answers with the top of the sample's bucket, up to 0.1% above it: capped at the largest
        // sample so that no percentile exceeds the max it is reported beside.
        return count == 0 ? 0 : Math.min(histogram.getValueAtPercentile(percentile), maxNanos) / 1e6;
    }

    /**
     * The 95% confidence interval of {@link #percentileMs}{@code (percentile)}; null without samples. Sectioned while
     * the samples' order is known, else the order-statistic interval for independent samples (see
     * {@link PercentileSections}).
     */
    public PercentileInterval percentileInterval(double percentile) {
        if (count == 0) {
            return null;
        }
        double estimateMs = percentileMs(percentile);
        PercentileInterval i = sections == null ? PercentileSections.independent(histogram, percentile, maxNanos)
                : sections.interval(histogram, percentile, Math.round(estimateMs * 1e6), maxNanos);
        // bucket edges aside, the estimate is one of the ranks inside; the clamp keeps it so at the edges too
        return new PercentileInterval(Math.min(i.lowMs(), estimateMs), Math.max(i.highMs(), estimateMs));
    }

    public double maxMs() {
        return maxNanos / 1e6;
    }
}
