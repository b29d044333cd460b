package dev.infersim.cli;

import dev.infersim.bench.ClientKeys;
import dev.infersim.result.RequestLogReader;
import dev.infersim.result.RequestRecord;
import dev.infersim.sim.Timeline;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Requests served per second over the second half of a run's sending: the engine's throughput once the batch has had
 * half the run to fill. Below the knee it equals the rate sent; past the knee it is the engine's capacity at the batch
 * the queue keeps full. Counted in output tokens over the workload's mean output tokens per request
 * ({@link #windows}), in consecutive windows whose batch means give it its interval
 * ({@link dev.infersim.result.MeanInterval}); where no per-request detail was kept, in completions, from the
 * simulator's timeline (completed = arrived minus backlog) or the benchmark client's per-second series.
 */
final class LateServiceRate {
    /** Windows the second half of sending is cut into for batch means. */
    static final int WINDOWS = 8;

    private LateServiceRate() {
    }

    /** Completions from a simulated run's timeline, per second of model time; NaN when sending spanned fewer than 3 samples. */
    static double ofTimeline(Timeline t) {
        int[] span = sendingSpan(t);
        return span == null ? Double.NaN : rate(t, (span[0] + span[1]) / 2, span[1]);
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
     * Completions from a measured run's per-second series ({@code infersim_timeseries}), per second of wall time; NaN if
     * absent.
     */
    static double ofSeries(ClientKeys.TimeSeries series) {
        double[][] buckets = secondHalf(series);
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
     * The engine's capacity while overloaded, as a rate of requests, from a run's per-request detail (the client's or
     * the simulator's rows): the output tokens served in each of {@value #WINDOWS} consecutive windows of the second
     * half of the measured requests' scheduled sends, per second, over the workload's mean output tokens per request.
     * Tokens, not completions: every engine step serves one token per running sequence, so the token rate is steady
     * where completions come in bursts of short requests, and its windows bound the capacity far more tightly. Each
     * request's first token counts at its time and the rest evenly between its first and last token. Per second of
     * the rows' clock; empty without two measured requests.
     */
    static double[] windows(Path detail, double meanOutputTokens) {
        List<RequestRecord> measured = new ArrayList<>();
        long[] sends = {Long.MAX_VALUE, Long.MIN_VALUE};
        new RequestLogReader(detail).forEach(false, row -> {
            if (!row.warmup()) {
                RequestRecord r = row.record();
                sends[0] = Math.min(sends[0], r.scheduledNanos());
                sends[1] = Math.max(sends[1], r.scheduledNanos());
                if (r.succeeded()) {
                    measured.add(r);
                }
            }
        });
        if (measured.size() < 2 || sends[1] <= sends[0]) {
            return new double[0];
        }
        long mid = sends[0] + (sends[1] - sends[0]) / 2;
        double width = (sends[1] - mid) / (double) WINDOWS;
        double[] tokens = new double[WINDOWS];
        for (RequestRecord r : measured) {
            addTokens(tokens, r.firstTokenNanos(), r.firstTokenNanos(), 1, mid, width);
            if (r.outputTokens() > 1) {
                addTokens(tokens, r.firstTokenNanos(), r.lastTokenNanos(), r.outputTokens() - 1, mid, width);
            }
        }
        double[] rates = new double[WINDOWS];
        for (int w = 0; w < WINDOWS; w++) {
            rates[w] = tokens[w] / (width / 1e9) / meanOutputTokens;
        }
        return rates;
    }

    /** Spreads {@code count} tokens evenly over [from, to] (all at {@code from} when equal) into the windows. */
    private static void addTokens(double[] windows, long from, long to, double count, long origin, double width) {
        for (int w = 0; w < windows.length; w++) {
            double start = origin + w * width;
            double end = start + width;
            if (to == from) {
                windows[w] += from >= start && from < end ? count : 0;
            } else {
                double overlap = Math.min(end, to) - Math.max(start, from);
                windows[w] += overlap > 0 ? count * overlap / (to - from) : 0;
            }
        }
    }

    /** (completed, seconds) of each bucket in the second half of sending, or null if the series is absent or short. */
    private static double[][] secondHalf(ClientKeys.TimeSeries series) {
        if (series == null || series.sent() == null) {
            return null;
        }
        List<Long> sent = series.sent();
        int first = -1;
        int last = -1;
        for (int i = 0; i < sent.size(); i++) {
            if (sent.get(i) > 0) {
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
            out[i - from] = new double[] {series.completed().get(i), series.bucketS().get(i)};
        }
        return out;
    }
}
