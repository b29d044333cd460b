package dev.infersim.bench.harness;

import dev.infersim.result.NonFiniteAsNull;

/**
 * The rate at which a harness's measured requests reached the server (its test and warm-up requests, which match no
 * measured request, left out): n - 1 gaps over the span of the n arrivals, and a 95% interval for the rate the sends
 * were drawn at, by the delta method on the span (n - 1 gaps of the sample's own standard deviation s: span +- 1.96 s
 * sqrt(n - 1)), which holds for any arrival process with independent gaps, Poisson or not.
 *
 * @param arrivals the measured requests that reached the server
 * @param perS     (n - 1) / span, requests per second; NaN under two arrivals
 * @param low      the interval's lower end; NaN under three arrivals
 * @param high     its upper end (infinite when the span's interval reaches 0); NaN under three arrivals
 */
public record HarnessRate(int arrivals, @NonFiniteAsNull double perS, @NonFiniteAsNull double low,
                          @NonFiniteAsNull double high) {

    /** From the arrival instants in ms, sorted. */
    public static HarnessRate of(double[] sortedMs) {
        int n = sortedMs.length;
        if (n < 2 || sortedMs[n - 1] <= sortedMs[0]) {
            return new HarnessRate(n, Double.NaN, Double.NaN, Double.NaN);
        }
        int gaps = n - 1;
        double span = (sortedMs[n - 1] - sortedMs[0]) / 1e3;
        double rate = gaps / span;
        if (n < 3) {
            return new HarnessRate(n, rate, Double.NaN, Double.NaN);
        }
        double mean = span / gaps;
        double var = 0;
        for (int i = 1; i < n; i++) {
            double g = (sortedMs[i] - sortedMs[i - 1]) / 1e3 - mean;
            var += g * g;
        }
        double half = 1.96 * Math.sqrt(var / (gaps - 1)) * Math.sqrt(gaps);
        return new HarnessRate(n, rate, gaps / (span + half), span > half ? gaps / (span - half) : Double.POSITIVE_INFINITY);
    }
}
