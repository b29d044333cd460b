package dev.infersim.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.sim.Timeline;

import java.util.Map;

/**
 * Completions per second over the second half of a run's sending: the engine's throughput once the batch has had half
 * the run to fill. Below the knee it equals the rate sent; past the knee it is the engine's capacity. Read from the
 * simulator's timeline (completed = arrived minus backlog) and from the benchmark client's per-second series alike.
 */
final class LateCompletions {
    private static final ObjectMapper JSON = new ObjectMapper();

    private LateCompletions() {
    }

    /** From a simulated run's timeline, per second of model time; NaN when sending spanned fewer than 3 samples. */
    static double ofTimeline(Timeline t) {
        int first = -1;
        int last = -1;
        long total = t.size() == 0 ? 0 : t.arrivals(t.size() - 1);
        for (int i = 0; i < t.size(); i++) {
            if (first < 0 && t.arrivals(i) > 0) {
                first = i;
            }
            if (t.arrivals(i) == total) {
                last = i;
                break;
            }
        }
        if (first < 0 || last - first < 2) {
            return Double.NaN;
        }
        int mid = (first + last) / 2;
        long done = (t.arrivals(last) - t.backlog(last)) - (t.arrivals(mid) - t.backlog(mid));
        return done / ((t.timeNanos(last) - t.timeNanos(mid)) / 1e9);
    }

    /**
     * From a measured run's per-second series ({@code infersim_timeseries}: arrays in memory, lists once read back
     * from JSON), per second of wall time; NaN if absent.
     */
    static double ofSeries(Map<String, Object> result) {
        if (!(result.get("infersim_timeseries") instanceof Map<?, ?> series) || series.get("sent") == null) {
            return Double.NaN;
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
            return Double.NaN;
        }
        double done = 0;
        double span = 0;
        for (int i = (first + last + 1) / 2; i <= last; i++) {
            done += completed[i];
            span += seconds[i];
        }
        return done / span;
    }
}
