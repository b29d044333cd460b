package dev.infersim.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.result.RequestLogReader;
import dev.infersim.result.RequestRecord;
import dev.infersim.sim.Timeline;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Completions per second over the second half of a run's sending: the engine's throughput once the batch has had half
 * the run to fill. Below the knee it equals the rate sent; past the knee it is the engine's capacity at the batch the
 * queue keeps full. Read from the simulator's timeline (completed = arrived minus backlog) and from the benchmark
 * client's per-second series alike, and as the rates of {@value #WINDOWS} consecutive windows of that half (the batch
 * means that give the rate its interval: {@link dev.infersim.result.MeanInterval}) from the timeline or from the
 * client's per-request detail.
 */
final class LateCompletions {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Windows the second half of sending is cut into for batch means. */
    static final int WINDOWS = 8;

    private LateCompletions() {
    }

    /** From a simulated run's timeline, per second of model time; NaN when sending spanned fewer than 3 samples. */
    static double ofTimeline(Timeline t) {
        int[] span = sendingSpan(t);
        return span == null ? Double.NaN : rate(t, (span[0] + span[1]) / 2, span[1]);
    }

    /** The rates of {@value #WINDOWS} consecutive windows of the second half; empty when too short. */
    static double[] windowsOfTimeline(Timeline t) {
        int[] span = sendingSpan(t);
        if (span == null) {
            return new double[0];
        }
        int mid = (span[0] + span[1]) / 2;
        int windows = Math.min(WINDOWS, span[1] - mid);
        double[] rates = new double[windows];
        for (int w = 0; w < windows; w++) {
            rates[w] = rate(t, mid + (span[1] - mid) * w / windows, mid + (span[1] - mid) * (w + 1) / windows);
        }
        return rates;
    }

    /** First and last timeline samples of the sending span, or null when it spans fewer than 3. */
    private static int[] sendingSpan(Timeline t) {
        int first = -1;
        long total = t.size() == 0 ? 0 : t.arrivals(t.size() - 1);
        for (int i = 0; i < t.size(); i++) {
            if (first < 0 && t.arrivals(i) > 0) {
                first = i;
            }
            if (t.arrivals(i) == total) {
                return first < 0 || i - first < 2 ? null : new int[] {first, i};
            }
        }
        return null;
    }

    private static double rate(Timeline t, int from, int to) {
        long done = (t.arrivals(to) - t.backlog(to)) - (t.arrivals(from) - t.backlog(from));
        return done / ((t.timeNanos(to) - t.timeNanos(from)) / 1e9);
    }

    /**
     * From a measured run's per-second series ({@code infersim_timeseries}: arrays in memory, lists once read back
     * from JSON), per second of wall time; NaN if absent.
     */
    static double ofSeries(Map<String, Object> result) {
        double[][] buckets = secondHalf(result);
        if (buckets == null) {
            return Double.NaN;
        }
        double done = 0;
        double span = 0;
        for (double[] b : buckets) {
            done += b[0];
            span += b[1];
        }
        return done / span;
    }

    /**
     * From a measured run's per-request detail ({@code --save-detailed} rows): the completion rates of {@value #WINDOWS}
     * consecutive windows of the second half of the measured requests' scheduled sends, per second of the client's
     * clock; empty without two measured requests.
     */
    static double[] windowsOfRequests(Path detail) {
        List<RequestRecord> measured = new ArrayList<>();
        new RequestLogReader(detail).forEach(false, row -> {
            if (!row.warmup()) {
                measured.add(row.record());
            }
        });
        if (measured.size() < 2) {
            return new double[0];
        }
        long first = measured.stream().mapToLong(RequestRecord::scheduledNanos).min().getAsLong();
        long last = measured.stream().mapToLong(RequestRecord::scheduledNanos).max().getAsLong();
        long mid = first + (last - first) / 2;
        double width = (last - mid) / (double) WINDOWS;
        long[] done = new long[WINDOWS];
        for (RequestRecord r : measured) {
            long end = r.lastTokenNanos();
            if (r.succeeded() && end >= mid && end < last) {
                done[(int) Math.min(WINDOWS - 1, (end - mid) / width)]++;
            }
        }
        double[] rates = new double[WINDOWS];
        for (int w = 0; w < WINDOWS; w++) {
            rates[w] = done[w] / (width / 1e9);
        }
        return rates;
    }

    /** (completed, seconds) of each bucket in the second half of sending, or null if the series is absent or short. */
    private static double[][] secondHalf(Map<String, Object> result) {
        if (!(result.get("infersim_timeseries") instanceof Map<?, ?> series) || series.get("sent") == null) {
            return null;
        }
        double[] sent = JSON.convertValue(series.get("sent"), double[].class);
        double[] completed = JSON.convertValue(series.get("completed"), double[].class);
        double[] seconds = JSON.convertValue(series.get("bucket_s"), double[].class);
        int first = -1;
        int last = -1;
        for (int i = 0; i < sent.length; i++) {
            if (sent[i] > 0) {
                first = first < 0 ? i : first;
                last = i;
            }
        }
        if (first < 0 || last - first < 1) {
            return null;
        }
        int from = (first + last + 1) / 2;
        double[][] out = new double[last - from + 1][];
        for (int i = from; i <= last; i++) {
            out[i - from] = new double[] {completed[i], seconds[i]};
        }
        return out;
    }
}
