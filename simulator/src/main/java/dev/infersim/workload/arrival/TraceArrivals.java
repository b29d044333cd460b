package dev.infersim.workload.arrival;

/**
 * Replays recorded arrival times. The times are taken relative to the first one, so a trace recorded at any epoch
 * starts at 0; they must not decrease. After the last recorded time it keeps returning that time.
 */
public final class TraceArrivals implements ArrivalProcess {

    private final long[] arrivalNanos;
    private int next;

    /** @param timestampsNanos recorded arrival times in nanoseconds, non-decreasing; copied */
    public TraceArrivals(long[] timestampsNanos) {
        if (timestampsNanos.length == 0) {
            throw new IllegalArgumentException("a trace needs at least one timestamp");
        }
        this.arrivalNanos = new long[timestampsNanos.length];
        long origin = timestampsNanos[0];
        for (int i = 0; i < timestampsNanos.length; i++) {
            if (i > 0 && timestampsNanos[i] < timestampsNanos[i - 1]) {
                throw new IllegalArgumentException("trace timestamps must not decrease: entry " + i + " ("
                        + timestampsNanos[i] + " ns) is before entry " + (i - 1) + " (" + timestampsNanos[i - 1] + " ns)");
            }
            arrivalNanos[i] = timestampsNanos[i] - origin;
        }
    }

    @Override
    public long nextArrivalNanos() {
        int i = Math.min(next, arrivalNanos.length - 1);
        next++;
        return arrivalNanos[i];
    }
}
