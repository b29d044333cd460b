package dev.infersim.sim;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.Arrays;

/**
 * Ready and desired replica counts of a fleet over time, one point per change (a step function from its first point):
 * the {@code infersim_replicas} key that {@code simulate} and {@code autoscale} both write.
 */
public final class ReplicaSeries {
    private long[] timeNanos = new long[16];
    private int[] ready = new int[16];
    private int[] desired = new int[16];
    private int count;

    /** Records the counts at {@code nowNanos} (not before the last point) if they changed. */
    public void record(long nowNanos, int readyNow, int desiredNow) {
        if (count > 0 && ready[count - 1] == readyNow && desired[count - 1] == desiredNow) {
            return;
        }
        if (count == timeNanos.length) {
            timeNanos = Arrays.copyOf(timeNanos, 2 * count);
            ready = Arrays.copyOf(ready, 2 * count);
            desired = Arrays.copyOf(desired, 2 * count);
        }
        if (count > 0 && timeNanos[count - 1] == nowNanos) {
            count--; // several changes at one instant: keep the last
        }
        timeNanos[count] = nowNanos;
        ready[count] = readyNow;
        desired[count] = desiredNow;
        count++;
    }

    public int size() { return count; }
    public long timeNanos(int i) { return timeNanos[i]; }
    public int ready(int i) { return ready[i]; }
    public int desired(int i) { return desired[i]; }

    /** Ready replicas at {@code nanos} (the step function's value there). */
    public int readyAt(long nanos) {
        int value = ready[0];
        for (int i = 0; i < count && timeNanos[i] <= nanos; i++) {
            value = ready[i];
        }
        return value;
    }

    /** Desired replicas at {@code nanos}. */
    public int desiredAt(long nanos) {
        int value = desired[0];
        for (int i = 0; i < count && timeNanos[i] <= nanos; i++) {
            value = desired[i];
        }
        return value;
    }

    /** The points as a result holds them ({@code infersim_replicas}). */
    public Points points() {
        double[] seconds = new double[count];
        for (int i = 0; i < count; i++) {
            seconds[i] = timeNanos[i] / 1e9;
        }
        return new Points(seconds, Arrays.copyOf(ready, count), Arrays.copyOf(desired, count));
    }

    /** Ready and desired replicas from each point's time (seconds) on. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Points(double[] timeS, int[] ready, int[] desired) {
    }
}
