package dev.infersim.server.observe;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A Prometheus classic histogram with fixed upper bounds, written by one thread (the engine thread) and read by any
 * (the /metrics handler). Single writer, so increments are plain read-then-lazySet: no CAS, no allocation.
 */
final class BucketHistogram {
    private final double[] bounds;
    private final AtomicLongArray counts;
    private final AtomicLong sumBits = new AtomicLong(Double.doubleToRawLongBits(0));

    BucketHistogram(double... bounds) {
        for (int i = 1; i < bounds.length; i++) {
            if (!(bounds[i] > bounds[i - 1])) {
                throw new IllegalArgumentException("bucket bounds must increase, got " + bounds[i - 1] + " then " + bounds[i]);
            }
        }
        this.bounds = bounds.clone();
        this.counts = new AtomicLongArray(bounds.length + 1);
    }

    /** vLLM's {@code build_1_2_5_buckets(max)}: 1, 2, 5, 10, 20, 50, ... up to and including max. */
    static BucketHistogram oneTwoFive(long max) {
        double[] b = new double[64];
        int n = 0;
        outer:
        for (long exponent = 1; ; exponent *= 10) {
            for (int m : new int[] {1, 2, 5}) {
                long v = m * exponent;
                if (v > max) {
                    break outer;
                }
                b[n++] = v;
            }
        }
        return new BucketHistogram(java.util.Arrays.copyOf(b, n));
    }

    /** Owner thread only. */
    void record(double value) {
        int i = 0;
        while (i < bounds.length && value > bounds[i]) {
            i++;
        }
        counts.lazySet(i, counts.get(i) + 1);
        sumBits.lazySet(Double.doubleToRawLongBits(Double.longBitsToDouble(sumBits.get()) + value));
    }

    /** Sets the count of every bucket, non-cumulative, the last one +Inf's (missing ones are 0): a fixed fake. */
    void setCounts(long[] perBucket) {
        for (int i = 0; i < counts.length(); i++) {
            counts.set(i, i < perBucket.length ? perBucket[i] : 0);
        }
    }

    double[] bounds() {
        return bounds;
    }

    /** Observations at or below bound {@code i}, or all of them for {@code i == bounds().length} (+Inf). */
    long cumulative(int i) {
        long total = 0;
        for (int j = 0; j <= i; j++) {
            total += counts.get(j);
        }
        return total;
    }

    long count() {
        return cumulative(bounds.length);
    }

    double sum() {
        return Double.longBitsToDouble(sumBits.get());
    }
}
