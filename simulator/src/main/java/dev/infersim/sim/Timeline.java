package dev.infersim.sim;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.Arrays;

/**
 * Engine state sampled over virtual time at a fixed interval, in a bounded number of points: when the buffer fills, every
 * other point is dropped and the interval doubles, so a run of any length ends with between {@code capacity / 2} and
 * {@code capacity} evenly spaced points. A sample at time t holds the state in force at t, after the events at t.
 * Columns: time_s, arrivals (cumulative scheduled arrivals), running, waiting (in the engine), backlog (arrived but not
 * finished, client queue included), kv_cache_usage, batch_size (sequences in the step in flight), batch_tokens (its
 * tokens). Primitive arrays; sampling allocates nothing. It also keeps the duration of the step in flight, for the
 * dashboard's replay of a run ({@link #stepNanos}), outside the result's columns.
 */
public final class Timeline {
    private final long startNanos;
    private final int capacity;
    private long intervalNanos;
    private int count;
    private final long[] timeNanos;
    private final long[] arrivals;
    private final int[] running;
    private final int[] waiting;
    private final int[] backlog;
    private final float[] kvUsage;
    private final int[] batchSize;
    private final int[] batchTokens;
    private final long[] stepNanos;

    /**
     * @param startNanos     time of the first sample
     * @param intervalNanos  initial sampling interval (doubles whenever the buffer fills)
     * @param capacity       maximum number of points kept, even, >= 2
     */
    public Timeline(long startNanos, long intervalNanos, int capacity) {
        if (intervalNanos < 1 || capacity < 2 || capacity % 2 != 0) {
            throw new IllegalArgumentException("timeline needs an interval >= 1 ns and an even capacity >= 2, got "
                    + intervalNanos + " ns, " + capacity);
        }
        this.startNanos = startNanos;
        this.intervalNanos = intervalNanos;
        this.capacity = capacity;
        timeNanos = new long[capacity];
        arrivals = new long[capacity];
        running = new int[capacity];
        waiting = new int[capacity];
        backlog = new int[capacity];
        kvUsage = new float[capacity];
        batchSize = new int[capacity];
        batchTokens = new int[capacity];
        stepNanos = new long[capacity];
    }

    /** Time of the next sample that is due. */
    public long nextSampleNanos() {
        return startNanos + count * intervalNanos;
    }

    /** Records one sample at {@link #nextSampleNanos()} with the given state, no step in flight. */
    public void sample(long arrivalsNow, int runningNow, int waitingNow, int backlogNow, double kvUsageNow, int batchSizeNow, long batchTokensNow) {
        sample(arrivalsNow, runningNow, waitingNow, backlogNow, kvUsageNow, batchSizeNow, batchTokensNow, 0);
    }

    /**
     * Records one sample at {@link #nextSampleNanos()} with the given state; {@code stepNanosNow} is the duration of the
     * step in flight (the mean over a fleet's replicas that run one), 0 when none runs.
     */
    public void sample(long arrivalsNow, int runningNow, int waitingNow, int backlogNow, double kvUsageNow, int batchSizeNow,
                       long batchTokensNow, long stepNanosNow) {
        if (count == capacity) {
            halve();
        }
        timeNanos[count] = nextSampleNanos();
        arrivals[count] = arrivalsNow;
        running[count] = runningNow;
        waiting[count] = waitingNow;
        backlog[count] = backlogNow;
        kvUsage[count] = (float) kvUsageNow;
        batchSize[count] = batchSizeNow;
        batchTokens[count] = (int) batchTokensNow;
        stepNanos[count] = stepNanosNow;
        count++;
    }

    private void halve() {
        int kept = 0;
        for (int i = 0; i < count; i += 2) {
            timeNanos[kept] = timeNanos[i];
            arrivals[kept] = arrivals[i];
            running[kept] = running[i];
            waiting[kept] = waiting[i];
            backlog[kept] = backlog[i];
            kvUsage[kept] = kvUsage[i];
            batchSize[kept] = batchSize[i];
            batchTokens[kept] = batchTokens[i];
            stepNanos[kept] = stepNanos[i];
            kept++;
        }
        count = kept;
        intervalNanos *= 2;
    }

    public int size() { return count; }
    public long intervalNanos() { return intervalNanos; }
    public long timeNanos(int i) { return timeNanos[i]; }
    public long arrivals(int i) { return arrivals[i]; }
    public int backlog(int i) { return backlog[i]; }
    public int waiting(int i) { return waiting[i]; }
    public int running(int i) { return running[i]; }
    public double kvUsage(int i) { return kvUsage[i]; }
    public int batchTokens(int i) { return batchTokens[i]; }
    /** Duration of the step in flight at sample {@code i}, ns; 0 when none ran. */
    public long stepNanos(int i) { return stepNanos[i]; }

    /**
     * Least-squares line through the queued requests (backlog minus running: waiting in the engine or for a client
     * slot) sampled in [fromNanos, toNanos]: its slope in requests per second, and the queue's jitter from sample to
     * sample (von Neumann's successive-difference estimate, sqrt(sum (y[i+1] - y[i])^2 / (2 (n - 1)))), which measures
     * random swings without mistaking a curved trend for noise. NaN slope when fewer than 3 samples fall in the range.
     */
    public QueueTrend fitQueued(long fromNanos, long toNanos) {
        double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, squaredSteps = 0, previous = 0;
        for (int i = 0; i < count; i++) {
            if (timeNanos[i] >= fromNanos && timeNanos[i] <= toNanos) {
                double x = (timeNanos[i] - fromNanos) / 1e9;
                double y = backlog[i] - running[i];
                if (n > 0) {
                    squaredSteps += (y - previous) * (y - previous);
                }
                previous = y;
                n++;
                sx += x;
                sy += y;
                sxx += x * x;
                sxy += x * y;
            }
        }
        double denominator = n * sxx - sx * sx;
        if (n < 3 || denominator == 0) {
            return new QueueTrend(Double.NaN, Double.NaN);
        }
        return new QueueTrend((n * sxy - sx * sy) / denominator, Math.sqrt(squaredSteps / (2 * (n - 1))));
    }

    /** A fitted queue trend: slope in requests per second, sample-to-sample jitter in requests. */
    public record QueueTrend(double slopePerS, double jitter) {
    }

    /** The columns as a result holds them (infersim_timelines): seconds, and KV usage rounded to 1e-4. */
    public Columns columns() {
        double[] seconds = new double[count];
        double[] kv = new double[count];
        for (int i = 0; i < count; i++) {
            seconds[i] = timeNanos[i] / 1e9;
            kv[i] = Math.round(kvUsage[i] * 1e4) / 1e4;
        }
        return new Columns(intervalNanos / 1e9, seconds, Arrays.copyOf(arrivals, count), Arrays.copyOf(running, count),
                Arrays.copyOf(waiting, count), Arrays.copyOf(backlog, count), kv, Arrays.copyOf(batchSize, count),
                Arrays.copyOf(batchTokens, count));
    }

    /** The sampled columns of a result's {@code infersim_timelines}, one entry per sample; see the class doc. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Columns(double intervalS, double[] timeS, long[] arrivals, int[] running, int[] waiting,
                          int[] backlog, double[] kvCacheUsage, int[] batchSize, int[] batchTokens) {
    }
}
