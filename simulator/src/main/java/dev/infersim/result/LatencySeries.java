package dev.infersim.result;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.Arrays;

/**
 * Per-request latency and SLO attainment over time, bucketed by the time each request was sent: requests, mean and
 * largest TTFT, and the fraction meeting the goodput SLO (when one is set) per bucket. Buckets start
 * {@code initialWidthNanos} wide; when {@code capacity} are in use, neighbours merge and the width doubles, so a run of
 * any length ends with at most {@code capacity} buckets. Recording allocates nothing.
 */
public final class LatencySeries {
    private final GoodputSlo slo;
    private final int capacity;
    private long widthNanos;
    private int used;
    private final int[] requests;
    private final int[] succeeded;
    private final int[] sloMet;
    private final double[] sumTtftNanos;
    private final long[] maxTtftNanos;

    public LatencySeries(GoodputSlo slo, long initialWidthNanos, int capacity) {
        if (initialWidthNanos < 1 || capacity < 2 || capacity % 2 != 0) {
            throw new IllegalArgumentException("latency series needs a width >= 1 ns and an even capacity >= 2, got "
                    + initialWidthNanos + " ns, " + capacity);
        }
        this.slo = slo;
        this.capacity = capacity;
        this.widthNanos = initialWidthNanos;
        requests = new int[capacity];
        succeeded = new int[capacity];
        sloMet = new int[capacity];
        sumTtftNanos = new double[capacity];
        maxTtftNanos = new long[capacity];
    }

    /** Counts one finished request; failed ones count as requests that missed the SLO. */
    public void record(RequestRecord r) {
        while (r.startNanos() / widthNanos >= capacity) {
            halve();
        }
        int b = (int) (r.startNanos() / widthNanos);
        used = Math.max(used, b + 1);
        requests[b]++;
        if (r.succeeded()) {
            long ttft = r.ttftNanos();
            succeeded[b]++;
            sumTtftNanos[b] += ttft;
            maxTtftNanos[b] = Math.max(maxTtftNanos[b], ttft);
            if (slo.isSet() && slo.isMetBy(ttft, r.tpotNanos(), r.e2elNanos())) {
                sloMet[b]++;
            }
        }
    }

    private void halve() {
        for (int i = 0; i < capacity / 2; i++) {
            requests[i] = requests[2 * i] + requests[2 * i + 1];
            succeeded[i] = succeeded[2 * i] + succeeded[2 * i + 1];
            sloMet[i] = sloMet[2 * i] + sloMet[2 * i + 1];
            sumTtftNanos[i] = sumTtftNanos[2 * i] + sumTtftNanos[2 * i + 1];
            maxTtftNanos[i] = Math.max(maxTtftNanos[2 * i], maxTtftNanos[2 * i + 1]);
        }
        Arrays.fill(requests, capacity / 2, capacity, 0);
        Arrays.fill(succeeded, capacity / 2, capacity, 0);
        Arrays.fill(sloMet, capacity / 2, capacity, 0);
        Arrays.fill(sumTtftNanos, capacity / 2, capacity, 0);
        Arrays.fill(maxTtftNanos, capacity / 2, capacity, 0);
        used = (used + 1) / 2;
        widthNanos *= 2;
    }

    public long widthNanos() { return widthNanos; }
    public int size() { return used; }
    public int requests(int i) { return requests[i]; }

    /** Fraction of bucket i's requests that met the SLO; NaN without an SLO or requests. */
    public double attainment(int i) {
        return slo.isSet() && requests[i] > 0 ? (double) sloMet[i] / requests[i] : Double.NaN;
    }

    /** The buckets as a result holds them ({@code infersim_latency_over_time}); see {@link Buckets}. */
    public Buckets buckets() {
        Double[] mean = new Double[used];
        Double[] max = new Double[used];
        Double[] attained = new Double[used];
        double[] seconds = new double[used];
        int[] counts = Arrays.copyOf(requests, used);
        for (int i = 0; i < used; i++) {
            seconds[i] = i * widthNanos / 1e9;
            int ok = succeeded[i];
            mean[i] = ok > 0 ? round(sumTtftNanos[i] / ok / 1e6) : null;
            max[i] = ok > 0 ? round(maxTtftNanos[i] / 1e6) : null;
            double a = attainment(i);
            attained[i] = Double.isNaN(a) ? null : round(a);
        }
        return new Buckets(widthNanos / 1e9, seconds, counts, mean, max, attained);
    }

    /**
     * Columns, one entry per bucket: time_s (bucket start), requests, mean_ttft_ms and max_ttft_ms (null in empty
     * buckets) and slo_attainment (null without an SLO or requests), values rounded to 1e-4.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Buckets(double intervalS, double[] timeS, int[] requests, Double[] meanTtftMs, Double[] maxTtftMs,
                          Double[] sloAttainment) {
    }

    private static double round(double v) {
        return Math.round(v * 1e4) / 1e4;
    }
}
