package dev.infersim.bench.measure;

import dev.infersim.common.ReadLateness;

import java.util.Locale;

/**
 * Whether the client's own timing error is a material share of what it measures. Every latency counts from the
 * scheduled send and ends when the client's event loop reads the chunk, so two delays of the client's own add to it:
 * the send lag (from the scheduled send to the request's bytes being in the socket) and the read delay (from a
 * chunk's bytes reaching the socket to the loop reading them, bounded per read from the loop's own accounts,
 * {@link ReadLateness}). At their p99 they may add
 * {@code send lag p99 + read delay p99} to a TTFT; a token gap is the difference of two reads, so it may be off by up to
 * the read delay p99. The run's latencies are the client's as much as the server's when:
 * <ul>
 *   <li>send lag p99 + read delay p99 exceeds {@value #MATERIAL_SHARE} of the TTFT p50, or</li>
 *   <li>read delay p99 exceeds {@value #MATERIAL_SHARE} of the mean token gap (mean ITL).</li>
 * </ul>
 * A busy machine makes these delays long, but a run whose delays stay small beside what it measures is valid however
 * busy the machine was: the machine's noise is reported beside it, as information.
 *
 * @param sendLagP99Nanos   p99 send lag; -1 where not measured
 * @param readDelayP99Nanos p99 read delay; -1 when it was not measured
 * @param ttftP50Nanos      the run's median TTFT; -1 without successful requests
 * @param meanItlNanos      the run's mean ITL; -1 without token gaps
 * @param ttftMaterial      whether the error is a material share of TTFT
 * @param itlMaterial       whether the read delay is a material share of the token gap
 */
public record TimingError(long sendLagP99Nanos, long readDelayP99Nanos, long ttftP50Nanos, long meanItlNanos,
                          boolean ttftMaterial, boolean itlMaterial) {
    static final double MATERIAL_SHARE = 0.25;

    static TimingError judge(long sendLagP99Nanos, long readDelayP99Nanos, long ttftP50Nanos, long meanItlNanos) {
        long ttftError = Math.max(0, sendLagP99Nanos) + Math.max(0, readDelayP99Nanos);
        boolean ttft = ttftP50Nanos > 0 && ttftError > MATERIAL_SHARE * ttftP50Nanos;
        boolean itl = meanItlNanos > 0 && readDelayP99Nanos > MATERIAL_SHARE * meanItlNanos;
        return new TimingError(sendLagP99Nanos, readDelayP99Nanos, ttftP50Nanos, meanItlNanos, ttft, itl);
    }

    /** Whether the latencies measure the client as much as the server. */
    public boolean material() {
        return ttftMaterial || itlMaterial;
    }

    /** The client's p99 error on a TTFT: send lag p99 plus read delay p99, ns. */
    public long ttftErrorNanos() {
        return Math.max(0, sendLagP99Nanos) + Math.max(0, readDelayP99Nanos);
    }

    /** One sentence: the error, its parts, their shares of TTFT and of the token gap, and what that means. */
    public String describe() {
        String parts = sendLagP99Nanos < 0 ? String.format(Locale.ROOT, "read delay %.3f ms, no schedule to lag behind",
                ms(readDelayP99Nanos)) : String.format(Locale.ROOT, "send lag %.3f + read delay %.3f ms",
                ms(sendLagP99Nanos), ms(Math.max(0, readDelayP99Nanos)));
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "client timing error p99 %.3f ms (%s)",
                ms(ttftErrorNanos()), parts));
        if (ttftP50Nanos > 0) {
            s.append(String.format(Locale.ROOT, " is %.0f%% of TTFT p50 %.2f ms", 100.0 * ttftErrorNanos() / ttftP50Nanos,
                    ms(ttftP50Nanos)));
        }
        if (meanItlNanos > 0 && readDelayP99Nanos >= 0) {
            s.append(String.format(Locale.ROOT, "; the read delay is %.0f%% of the mean ITL %.2f ms",
                    100.0 * readDelayP99Nanos / meanItlNanos, ms(meanItlNanos)));
        }
        s.append(String.format(Locale.ROOT, " (material above %.0f%%)", 100 * MATERIAL_SHARE));
        if (!material()) {
            return s.append(": the latencies are the server's, within the client's error").toString();
        }
        return s.append(ttftMaterial ? ": TTFT" : ": ITL").append(ttftMaterial && itlMaterial ? " and ITL" : "")
                .append(" measure this client and machine as much as the server; give the client cores of its own "
                        + "(or run the server elsewhere), or measure longer latencies (a lower --time-scale)").toString();
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
