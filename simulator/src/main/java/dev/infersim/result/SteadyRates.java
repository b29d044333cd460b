package dev.infersim.result;

import java.util.Arrays;

/**
 * The rates of an open-loop run while it was sending, without the two ends that bias a short run's whole-window
 * figures (vLLM's {@code request_throughput} and {@code output_throughput}): the wait for the first responses and the
 * drain after the last send, about one latency each. Counts intended sends and first tokens in 10 ms bins.
 *
 * <p>Requests taken in are counted by first token rather than completion: TTFT hardly varies below saturation, where
 * E2EL varies with every request's output length, so completions counted over a few seconds miss the long requests
 * and fall short of the send rate even when the server keeps up. When it does not, TTFT grows during the run and first
 * tokens arrive slower than sends. Not thread-safe.
 */
final class SteadyRates {
    private static final long BIN_NANOS = 10_000_000;

    private final long startNanos;
    private long sendingEndNanos = -1;
    private int[] sendsPerBin = new int[1024];
    private int[] firstTokensPerBin = new int[1024];

    SteadyRates(long startNanos) {
        this.startNanos = startNanos;
    }

    void recordSend(long originNanos) {
        sendsPerBin = count(sendsPerBin, originNanos);
    }

    void recordFirstToken(long nanos) {
        firstTokensPerBin = count(firstTokensPerBin, nanos);
    }

    /** The last request of the window has gone out; until then both rates are unknown. */
    void sendingEnded(long nanos) {
        sendingEndNanos = nanos;
    }

    /** Requests offered per second over the sending span, by intended send time; NaN before sending ended. */
    double sendRate() {
        return sendingEndNanos <= startNanos ? Double.NaN
                : countBetween(sendsPerBin, startNanos, sendingEndNanos) / sendingSpanSeconds();
    }

    /**
     * Requests the server took in per second while they were being sent: first tokens over the sending span shifted by
     * the median TTFT, over its length. NaN before sending ended or when the median TTFT is unknown.
     */
    double requestThroughput(double medianTtftMs) {
        if (sendingEndNanos <= startNanos || Double.isNaN(medianTtftMs)) {
            return Double.NaN;
        }
        long shift = (long) (medianTtftMs * 1e6);
        return countBetween(firstTokensPerBin, startNanos + shift, sendingEndNanos + shift) / sendingSpanSeconds();
    }

    private double sendingSpanSeconds() {
        return Math.max(BIN_NANOS, sendingEndNanos - startNanos) / 1e9;
    }

    private int[] count(int[] bins, long nanos) {
        int b = (int) Math.max(0, (nanos - startNanos) / BIN_NANOS);
        int[] out = b < bins.length ? bins : Arrays.copyOf(bins, Math.max(b + 1, bins.length * 2));
        out[b]++;
        return out;
    }

    /** Events in the bins covering [from, to]: whole bins, so the span is exact to one bin at each end. */
    private long countBetween(int[] bins, long fromNanos, long toNanos) {
        int first = (int) Math.max(0, (fromNanos - startNanos) / BIN_NANOS);
        int last = (int) Math.min(bins.length - 1, (toNanos - startNanos) / BIN_NANOS);
        long n = 0;
        for (int b = first; b <= last; b++) {
            n += bins[b];
        }
        return n;
    }
}
