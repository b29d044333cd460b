package dev.infersim.demo;

import dev.infersim.bench.measure.ClientKeys;
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
     * A run's late service: the token windows' rates ({@link #windows}) and the completion rate ({@link #completionRate}),
     * per second of the rows' clock.
     */
    record Late(double[] windows, double completedPerS) {
        static final Late NONE = new Late(new double[0], Double.NaN);

        static Late of(List<Served> measured, double meanOutputTokens) {
            return new Late(LateServiceRate.windows(measured, meanOutputTokens), completionRate(measured));
        }

        /** The same per second of a clock {@code factor} times slower (wall to model time: the time scale). */
        Late slower(double factor) {
            double[] w = windows.clone();
            for (int i = 0; i < w.length; i++) {
                w[i] /= factor;
            }
            return new Late(w, completedPerS / factor);
        }
    }

    /** One request as a run's rows or the server's truth tell it: sent (or arrived), first and last token, tokens. */
    record Served(long sentNanos, long firstTokenNanos, long lastTokenNanos, int outputTokens, boolean succeeded) {
    }

    /**
     * The engine's capacity while overloaded, as a rate of requests, from a run's per-request detail (the client's or
     * the simulator's rows): see {@link #windows(List, double)}. Per second of the rows' clock.
     */
    static double[] windows(Path detail, double meanOutputTokens) {
        return windows(served(detail), meanOutputTokens);
    }

    /**
     * The output tokens served in each of {@value #WINDOWS} consecutive windows of the second half of the measured
     * requests' sends, per second, over the workload's mean output tokens per request. Tokens, not completions: every
     * engine step serves one token per running sequence, so the token rate is steady where completions come in bursts
     * of short requests, and its windows bound the capacity far more tightly. Each request's first token counts at its
     * time and the rest evenly between its first and last token. Empty without two measured requests.
     */
    static double[] windows(List<Served> measured, double meanOutputTokens) {
        long[] sends = {Long.MAX_VALUE, Long.MIN_VALUE};
        for (Served r : measured) {
            sends[0] = Math.min(sends[0], r.sentNanos());
            sends[1] = Math.max(sends[1], r.sentNanos());
        }
        List<Served> succeeded = measured.stream().filter(Served::succeeded).toList();
        if (succeeded.size() < 2 || sends[1] <= sends[0]) {
            return new double[0];
        }
        long mid = sends[0] + (sends[1] - sends[0]) / 2;
        double width = (sends[1] - mid) / (double) WINDOWS;
        double[] tokens = new double[WINDOWS];
        for (Served r : succeeded) {
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

    /**
     * Requests completed per second over the second half of the measured requests' sends, the same span as
     * {@link #windows}: what a reader compares with the rate offered. Unlike the token rate it never runs ahead of the
     * engine's sustained capacity: a run just past the knee whose batch is still filling serves tokens of a young batch
     * fast, but completes no more requests per second than the engine can sustain. NaN without two measured requests.
     */
    static double completionRate(List<Served> measured) {
        long first = measured.stream().mapToLong(Served::sentNanos).min().orElse(0);
        long last = measured.stream().mapToLong(Served::sentNanos).max().orElse(0);
        if (measured.size() < 2 || last <= first) {
            return Double.NaN;
        }
        long mid = first + (last - first) / 2;
        long done = measured.stream().filter(r -> r.succeeded() && r.lastTokenNanos() >= mid && r.lastTokenNanos() < last)
                .count();
        return done / ((last - mid) / 1e9);
    }

    /** The measured (not warmup) requests of a run's per-request detail. */
    static List<Served> served(Path detail) {
        List<Served> measured = new ArrayList<>();
        new RequestLogReader(detail).forEach(false, row -> {
            if (!row.warmup()) {
                RequestRecord r = row.record();
                measured.add(new Served(r.scheduledNanos(), r.firstTokenNanos(), r.lastTokenNanos(), r.outputTokens(),
                        r.succeeded()));
            }
        });
        return measured;
    }

    /** Requests sent per second from the first send to the last, or NaN with fewer than two. */
    static double sendRate(List<Served> measured) {
        long first = measured.stream().mapToLong(Served::sentNanos).min().orElse(0);
        long last = measured.stream().mapToLong(Served::sentNanos).max().orElse(0);
        return measured.size() < 2 || last <= first ? Double.NaN : (measured.size() - 1) / ((last - first) / 1e9);
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
