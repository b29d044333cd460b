package dev.infersim.result;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.apache.commons.math3.distribution.BinomialDistribution;
import org.apache.commons.math3.distribution.TDistribution;

/**
 * Confidence intervals for percentiles of samples that may be correlated, as latencies of a queue are: requests that
 * finish close together saw the same batch and the same queue, so a run of n requests holds far less than n
 * independent observations near saturation, and an interval that assumes independence is too narrow.
 *
 * <p>Method: sectioning (Asmussen and Glynn, <i>Stochastic Simulation: Algorithms and Analysis</i>, Springer 2007,
 * chapter III section 5a; for quantiles, Nakayama, ACM TOMACS 24(4), 2014). The samples, in the order they were
 * recorded, are cut into m consecutive sections (between {@value #SECTIONS} and twice that: sections hold a count of
 * samples that doubles as the run grows, so memory stays constant). For the percentile estimate q of all samples, each
 * section's fraction of samples at or below q varies around p; the spread of those fractions, with Student's t on m - 1
 * degrees of freedom, bounds the fraction of the population below q, and the interval is the sample quantiles at p
 * minus and plus that half-width. Correlation inflates the sections' spread and so the interval. The interval is never
 * narrower than the distribution-free order-statistic interval for independent samples (Conover, <i>Practical
 * Nonparametric Statistics</i>, 3rd ed., 1999, section 3.2: the ranks bracketing the percentile by the binomial
 * distribution), which is also what is left when there are no sections (statistics restored from a histogram log).
 *
 * <p>Sections are histograms of 2 significant digits (their only use is the fraction below a value); the percentiles
 * themselves come from the caller's 3-digit histogram. Recording allocates nothing once a section's range is sized.
 */
final class PercentileSections {
    /** The fewest sections kept once there are that many samples; at most twice this many. */
    static final int SECTIONS = 10;
    private static final long HIGHEST_TRACKABLE_NANOS = 3_600_000_000_000L;

    private Histogram[] sections = new Histogram[2 * SECTIONS];
    private Histogram[] spare = new Histogram[2 * SECTIONS];
    private long sectionSize = 1;
    private int current;
    private long inCurrent;

    /** Adds {@code samples} equal samples to the section being filled; a batch is never split over two sections. */
    void record(long nanos, long samples) {
        Histogram h = sections[current];
        if (h == null) {
            h = new Histogram(1, HIGHEST_TRACKABLE_NANOS, 2);
            h.setAutoResize(true);
            sections[current] = h;
        }
        h.recordValueWithCount(nanos, samples);
        inCurrent += samples;
        if (inCurrent >= sectionSize) {
            inCurrent = 0;
            if (++current == sections.length) {
                halve();
            }
        }
    }

    /** Merges neighbouring sections pairwise: half as many, twice the size, the emptied histograms kept for reuse. */
    private void halve() {
        for (int i = 0; i < SECTIONS; i++) {
            Histogram merged = sections[2 * i];
            Histogram emptied = sections[2 * i + 1];
            merged.add(emptied);
            emptied.reset();
            spare[i] = merged;
            spare[SECTIONS + i] = emptied;
        }
        Histogram[] swap = sections;
        sections = spare;
        spare = swap;
        sectionSize *= 2;
        current = SECTIONS;
    }

    /**
     * The interval for the {@code percentile}-th percentile (0..100] of {@code all} (every sample, 3 digits), whose
     * estimate is {@code estimateNanos}; null without samples.
     */
    PercentileInterval interval(Histogram all, double percentile, long estimateNanos, long maxNanos) {
        return interval(all, percentile, estimateNanos, maxNanos, this);
    }

    /** The same with no sections: the order-statistic interval for independent samples only. */
    static PercentileInterval independent(Histogram all, double percentile, long maxNanos) {
        return interval(all, percentile, 0, maxNanos, null);
    }

    private static PercentileInterval interval(Histogram all, double percentile, long estimateNanos, long maxNanos,
                                               PercentileSections sections) {
        long n = all.getTotalCount();
        if (n == 0) {
            return null;
        }
        double p = percentile / 100;
        double alpha = 1 - PercentileInterval.CONFIDENCE;
        // order statistics: the number of samples below the true percentile is Binomial(n, p)
        BinomialDistribution below = new BinomialDistribution(null, (int) Math.min(n, Integer.MAX_VALUE), p);
        long lowRank = below.inverseCumulativeProbability(alpha / 2);
        long highRank = below.inverseCumulativeProbability(1 - alpha / 2) + 1;
        double low = lowRank < 1 ? valueAtRank(all, 1) : valueAtRank(all, lowRank);
        double high = highRank > n ? Double.POSITIVE_INFINITY : Math.min(valueAtRank(all, highRank), maxNanos);
        double halfWidth = sections == null ? 0 : sections.fractionHalfWidth(estimateNanos, alpha);
        if (halfWidth > 0) {
            double fromLow = Math.floor((p - halfWidth) * n);
            double fromHigh = Math.ceil((p + halfWidth) * n);
            low = Math.min(low, fromLow < 1 ? valueAtRank(all, 1) : valueAtRank(all, (long) fromLow));
            high = Math.max(high, fromHigh > n ? Double.POSITIVE_INFINITY
                    : Math.min(valueAtRank(all, (long) fromHigh), maxNanos));
        }
        return new PercentileInterval(low / 1e6, high / 1e6);
    }

    /**
     * Half-width of the confidence interval for the fraction of the population at or below {@code valueNanos}, from the
     * spread of that fraction over the sections (weighted by their sizes); 0 with fewer than {@value #SECTIONS}.
     */
    private double fractionHalfWidth(long valueNanos, double alpha) {
        int m = 0;
        long n = 0;
        long at = 0;
        for (Histogram h : sections) {
            if (h != null && h.getTotalCount() > 0) {
                m++;
                n += h.getTotalCount();
                at += h.getCountBetweenValues(0, valueNanos);
            }
        }
        if (m < SECTIONS) {
            return 0;
        }
        double mean = (double) at / n;
        double sum = 0;
        for (Histogram h : sections) {
            if (h != null && h.getTotalCount() > 0) {
                double w = (double) h.getTotalCount() / n;
                double f = (double) h.getCountBetweenValues(0, valueNanos) / h.getTotalCount();
                sum += w * w * (f - mean) * (f - mean);
            }
        }
        double variance = sum * m / (m - 1);
        return new TDistribution(null, m - 1).inverseCumulativeProbability(1 - alpha / 2) * Math.sqrt(variance);
    }

    /** The rank-th smallest sample (1-based), at its histogram bucket's highest equivalent value. */
    private static double valueAtRank(Histogram h, long rank) {
        for (HistogramIterationValue v : h.recordedValues()) {
            if (v.getTotalCountToThisValue() >= rank) {
                return h.highestEquivalentValue(v.getValueIteratedTo());
            }
        }
        return h.getMaxValue();
    }
}
