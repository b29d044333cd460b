package dev.infersim.demo;

import dev.infersim.result.MeanInterval;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A rate the demo concludes (a knee, the highest rate meeting the objective), in requests per model second, with its 95%
 * interval. {@code lowPerS} is 0 where nothing bounds it from below, {@code highPerS} +Infinity where the sweep does
 * not bound it from above; all three are NaN where there is no such rate (a sweep that never overloads has no knee).
 */
record RateEstimate(double perS, double lowPerS, double highPerS) {
    static final RateEstimate NONE = new RateEstimate(Double.NaN, Double.NaN, Double.NaN);

    /** A rate known exactly (a closed form's). */
    static RateEstimate exact(double perS) {
        return new RateEstimate(perS, perS, perS);
    }

    static RateEstimate of(MeanInterval m) {
        return new RateEstimate(m.mean(), m.low(), m.high());
    }

    boolean found() {
        return Double.isFinite(perS);
    }

    /** Whether the interval is known on both sides. */
    boolean bounded() {
        return Double.isFinite(lowPerS) && lowPerS > 0 && Double.isFinite(highPerS);
    }

    /** Half the interval's width over the rate (0.05 is +-5%); +Infinity where unbounded or unknown. */
    double relativeHalfWidth() {
        return found() && bounded() ? (highPerS - lowPerS) / 2 / perS : Double.POSITIVE_INFINITY;
    }

    /** Whether two estimates' intervals share a rate. */
    boolean overlaps(RateEstimate other) {
        return lowOrZero() <= other.highOrInfinite() && other.lowOrZero() <= highOrInfinite();
    }

    boolean contains(double rate) {
        return rate >= lowOrZero() && rate <= highOrInfinite();
    }

    private double lowOrZero() {
        return Double.isNaN(lowPerS) ? 0 : lowPerS;
    }

    private double highOrInfinite() {
        return Double.isNaN(highPerS) ? Double.POSITIVE_INFINITY : highPerS;
    }

    /** "45.50 (95% CI 44.10-46.90)", "at least 58.78" past the sweep, or {@code none}. */
    String words(String none) {
        if (!found()) {
            return none;
        }
        if (lowPerS == perS && highPerS == perS) {
            return fmt(perS);
        }
        String low = Double.isNaN(lowPerS) || lowPerS <= 0 ? "?" : fmt(lowPerS);
        String high = Double.isNaN(highPerS) || Double.isInfinite(highPerS) ? "?" : fmt(highPerS);
        return fmt(perS) + " (95% CI " + low + "-" + high + ")";
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    /** The interval as a JSON array {@code [low, high]}, null for an unknown side; null when there is no rate. */
    List<Double> intervalJson() {
        if (!found()) {
            return null;
        }
        return Arrays.asList(Double.isNaN(lowPerS) ? null : lowPerS, Double.isFinite(highPerS) ? highPerS : null);
    }
}
