package dev.infersim.result;

import java.util.Arrays;

/**
 * vLLM's {@code max_output_tokens_per_s} and {@code max_concurrent_requests}: output tokens counted in one-second bins
 * from the start of the measured window, and for every bin the requests active during it (a request spans the bins from
 * its start second to its last-token second, inclusive). Bins are a growable primitive array: recording allocates only
 * when the run grows past its current length.
 */
public final class PeakRates {
    private static final long SECOND_NANOS = 1_000_000_000L;

    private final long originNanos;
    private long[] tokens = new long[64];
    private int[] concurrencyDelta = new int[64];

    /** @param originNanos start of the measured window; bin 0 starts here */
    public PeakRates(long originNanos) {
        this.originNanos = originNanos;
    }

    /** {@code count} output tokens that arrived at {@code nanos}. */
    public void recordTokens(long nanos, int count) {
        int bin = bin(nanos);
        ensure(bin + 1);
        tokens[bin] += count;
    }

    /** A request active from {@code startNanos} to {@code lastTokenNanos}. */
    public void recordRequest(long startNanos, long lastTokenNanos) {
        int first = bin(startNanos);
        int last = bin(lastTokenNanos);
        ensure(last + 2);
        concurrencyDelta[first]++;
        concurrencyDelta[last + 1]--;
    }

    public long maxOutputTokensPerS() {
        long max = 0;
        for (long t : tokens) {
            max = Math.max(max, t);
        }
        return max;
    }

    public int maxConcurrentRequests() {
        int running = 0;
        int max = 0;
        for (int delta : concurrencyDelta) {
            running += delta;
            max = Math.max(max, running);
        }
        return max;
    }

    private int bin(long nanos) {
        return (int) Math.max(0, (nanos - originNanos) / SECOND_NANOS);
    }

    private void ensure(int length) {
        if (length > tokens.length) {
            int n = Math.max(length, tokens.length * 2);
            tokens = Arrays.copyOf(tokens, n);
            concurrencyDelta = Arrays.copyOf(concurrencyDelta, n);
        }
    }
}
