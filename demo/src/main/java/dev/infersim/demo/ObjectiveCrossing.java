package dev.infersim.demo;

/**
 * The highest offered rate at which a latency curve still meets an objective: where the curve, drawn through the swept
 * rates (linear in the rate, logarithmic in the latency, as latency grows near a knee), first rises above the
 * objective. Its interval comes from the curves through each point's interval: the upper curve crosses first (the
 * lowest rate the objective may fail at) and the lower curve last. A point with no value, or an unbounded upper
 * interval, counts as above the objective: nothing shows it meets it. Rates must be sorted.
 */
final class ObjectiveCrossing {
    private ObjectiveCrossing() {
    }

    /**
     * @return the crossing with its interval; NaN where even the lightest rate misses the objective; at least the
     * highest rate (interval open above) where every rate meets it
     */
    static RateEstimate highestRateMeeting(double[] rates, double[] values, double[] lows, double[] highs, double objective) {
        if (rates.length == 0) {
            return RateEstimate.NONE;
        }
        double estimate = crossing(rates, values, objective);
        double low = crossing(rates, highs, objective);
        double high = crossing(rates, lows, objective);
        double top = rates[rates.length - 1];
        if (estimate == 0) {
            return new RateEstimate(Double.NaN, 0, high == Double.POSITIVE_INFINITY ? top : high);
        }
        return new RateEstimate(Math.min(estimate, top), Math.min(low, top), high);
    }

    /** Where the piecewise curve first exceeds the objective: 0 if at once, +Infinity if never. */
    static double crossing(double[] rates, double[] values, double objective) {
        for (int i = 0; i < rates.length; i++) {
            if (meets(values[i], objective)) {
                continue;
            }
            if (i == 0) {
                return 0;
            }
            double before = values[i - 1];
            double after = values[i];
            if (!Double.isFinite(after)) {
                return rates[i - 1];
            }
            double share = before > 0 ? Math.log(objective / before) / Math.log(after / before)
                    : (objective - before) / (after - before);
            return rates[i - 1] + share * (rates[i] - rates[i - 1]);
        }
        return Double.POSITIVE_INFINITY;
    }

    private static boolean meets(double value, double objective) {
        return Double.isFinite(value) && value <= objective;
    }
}
