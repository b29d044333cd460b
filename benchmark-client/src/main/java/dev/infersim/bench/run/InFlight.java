package dev.infersim.bench.run;

/**
 * Requests in flight over all lanes of a {@link LoadRun}: the count, its maximum, and its time integral for the mean;
 * and those handed to a lane but not yet due, so that a run does not end before they are sent. Thread-safe: the pacer
 * and every lane's event loop update it.
 */
final class InFlight {
    private int count;
    private int handedOff;
    private int max;
    private double integralNanos;
    private long sinceNanos;
    private long averagingFromNanos;

    synchronized void reset(long nowNanos) {
        max = count;
        integralNanos = 0;
        sinceNanos = nowNanos;
        averagingFromNanos = nowNanos;
    }

    synchronized void startAveraging(long nowNanos) {
        add(0, nowNanos);
        integralNanos = 0;
        averagingFromNanos = nowNanos;
    }

    synchronized void add(int delta, long nowNanos) {
        integralNanos += (double) count * Math.max(0, nowNanos - sinceNanos);
        sinceNanos = Math.max(sinceNanos, nowNanos);
        count += delta;
        max = Math.max(max, count);
    }

    synchronized void handedOff() {
        handedOff++;
    }

    /** A handed-off request's time came: it is in flight from {@code nowNanos} if {@code sent}, else dropped. */
    synchronized void sent(boolean sent, long nowNanos) {
        handedOff--;
        if (sent) {
            add(1, nowNanos);
        }
    }

    /** Time-average of the count from the last reset or {@link #startAveraging} to {@code nowNanos}. */
    synchronized double mean(long nowNanos) {
        add(0, nowNanos);
        return integralNanos / Math.max(1, nowNanos - averagingFromNanos);
    }

    /** Requests in flight or still to be sent by a lane. */
    synchronized int count() {
        return count + handedOff;
    }

    synchronized int max() {
        return max;
    }
}
