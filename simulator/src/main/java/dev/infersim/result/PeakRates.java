package dev.infersim.result;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * vLLM's {@code max_output_tokens_per_s} and {@code max_concurrent_requests}: output tokens counted in one-second bins
 * from the start of the measured window, and for every bin the requests active during it (a request spans the bins from
 * its start second to its last-token second, inclusive). The first {@value #DENSE_BINS} bins (12 days) are growable
 * primitive arrays, so recording allocates only when the run grows past their current length; later bins, which only a
 * run of very sparse arrivals reaches, go to sorted maps, so memory follows what is recorded, never the time span.
 */
public final class PeakRates {
    private static final long SECOND_NANOS = 1_000_000_000L;
    static final int DENSE_BINS = 1 << 20;

    private final long originNanos;
    private long[] tokens = new long[64];
    private int[] concurrencyDelta = new int[64];
    private final TreeMap<Long, Long> lateTokens = new TreeMap<>();
    private final TreeMap<Long, Integer> lateConcurrencyDelta = new TreeMap<>();

    /** @param originNanos start of the measured window; bin 0 starts here */
    public PeakRates(long originNanos) {
        this.originNanos = originNanos;
    }

    /** {@code count} output tokens that arrived at {@code nanos}. */
    public void recordTokens(long nanos, int count) {
        long bin = bin(nanos);
        if (bin < DENSE_BINS) {
            ensure((int) bin + 1);
            tokens[(int) bin] += count;
        } else {
            lateTokens.merge(bin, (long) count, Long::sum);
        }
    }

    /** A request active from {@code startNanos} to {@code lastTokenNanos}. */
    public void recordRequest(long startNanos, long lastTokenNanos) {
        addConcurrency(bin(startNanos), 1);
        addConcurrency(bin(lastTokenNanos) + 1, -1);
    }

    private void addConcurrency(long bin, int delta) {
        if (bin < DENSE_BINS) {
            ensure((int) bin + 1);
            concurrencyDelta[(int) bin] += delta;
        } else {
            lateConcurrencyDelta.merge(bin, delta, Integer::sum);
        }
    }

    public long maxOutputTokensPerS() {
        long max = 0;
        for (long t : tokens) {
            max = Math.max(max, t);
        }
        for (long t : lateTokens.values()) {
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
        for (Map.Entry<Long, Integer> e : lateConcurrencyDelta.entrySet()) {
            running += e.getValue();
            max = Math.max(max, running);
        }
        return max;
    }

    private long bin(long nanos) {
        return Math.max(0, (nanos - originNanos) / SECOND_NANOS);
    }

    private void ensure(int length) {
        if (length > tokens.length) {
            int n = Math.min(DENSE_BINS, Math.max(length, tokens.length * 2));
            tokens = Arrays.copyOf(tokens, n);
            concurrencyDelta = Arrays.copyOf(concurrencyDelta, n);
        }
    }
}
