package dev.infersim.demo;

import dev.infersim.result.PercentileInterval;
import dev.infersim.result.MeanInterval;
import java.util.List;

/** A 95% interval, in the unit of the value it bounds; NaN sides where unknown, high +Infinity where unbounded. */
record DemoSpan(double low, double high) {
    static final DemoSpan NONE = new DemoSpan(Double.NaN, Double.NaN);

    static DemoSpan of(MeanInterval m) {
        return new DemoSpan(m.low(), m.high());
    }

    /** From a result's interval ({@code null} where it has none), times {@code scale}; high +Infinity if unbounded. */
    static DemoSpan of(PercentileInterval interval, double scale) {
        if (interval == null) {
            return NONE;
        }
        return new DemoSpan(interval.lowMs() * scale, interval.bounded() ? interval.highMs() * scale : Double.POSITIVE_INFINITY);
    }

    List<Double> toJson() {
        return Double.isNaN(low) ? null : java.util.Arrays.asList(low, Double.isFinite(high) ? high : null);
    }
}
