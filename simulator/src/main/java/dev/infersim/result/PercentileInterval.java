package dev.infersim.result;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Arrays;
import java.util.List;

/**
 * A 95% confidence interval for one percentile of a latency metric, in milliseconds; {@code highMs} is
 * {@code +Infinity} where the samples cannot bound the percentile from above (too few of them beyond it: a p99 of
 * fewer than about 370 samples). See {@link PercentileSections} for the method. In a result it is the array
 * {@code [low, high]} rounded to 0.1 µs, high null where unbounded.
 */
public record PercentileInterval(double lowMs, double highMs) {
    /** The confidence level of every interval infersim reports. */
    public static final double CONFIDENCE = 0.95;

    /** How the intervals are computed, in one line, for the JSON results and reports. */
    public static final String METHOD = "95% confidence by sectioning (Asmussen and Glynn, Stochastic Simulation, 2007, "
            + "III.5a): the fraction of each of 10-20 consecutive sections of the samples below the percentile, with "
            + "Student's t, so correlated latencies widen it; never narrower than the distribution-free order-statistic "
            + "interval for independent samples (Conover, Practical Nonparametric Statistics, 1999, 3.2)";

    /** Whether the samples bound the percentile from above. */
    public boolean bounded() {
        return Double.isFinite(highMs);
    }

    /** Whether {@code valueMs} lies within the interval. */
    public boolean contains(double valueMs) {
        return valueMs >= lowMs && valueMs <= highMs;
    }

    /** The interval as a JSON array {@code [low, high]}, high null where unbounded. */
    @JsonValue
    public List<Double> toJson() {
        return Arrays.asList(round(lowMs), bounded() ? round(highMs) : null);
    }

    /** This interval as a result states it: both ends rounded to 0.1 µs (1e-4 ms). */
    public PercentileInterval rounded() {
        return new PercentileInterval(round(lowMs), bounded() ? round(highMs) : highMs);
    }

    /** An interval read back from its JSON array. */
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    static PercentileInterval fromJson(List<Double> lowHigh) {
        return new PercentileInterval(lowHigh.get(0), lowHigh.get(1) == null ? Double.POSITIVE_INFINITY : lowHigh.get(1));
    }

    private static double round(double ms) {
        return Math.round(ms * 1e4) / 1e4;
    }
}
