package dev.infersim.bench.measure;

import java.util.Locale;

/**
 * Whether a run's send lag (actual send minus scheduled send) makes its numbers untrustworthy, and what caused it.
 *
 * <p>Send lag is judged only against a schedule: with {@code --request-rate inf} (everything at once) or a closed
 * loop there is no intended send time to be late for. Against a schedule, a p99 lag within the limit is fine. Above
 * it, the cause is named:
 * <ul>
 *   <li>{@link Cause#CONNECTING}: the lag was spent waiting for a connection (the event loops took the requests up
 *   on time: p99 of that part within the limit): the server was slow to accept new connections, or all were busy.
 *   A real client waits the same, so the run stays valid, and the cause is printed.</li>
 *   <li>{@link Cause#BURST}: the lag falls on sends the schedule packed within {@value #BURST_GAP_NANOS} ns of the one
 *   before (lag of the other sends is within the limit): the schedule asked for more at once than a client sends at
 *   once. The run is invalid: latencies of the burst include the client's queue.</li>
 *   <li>{@link Cause#MACHINE_NOISE}: a probe thread that only sleeps ({@link SchedulingNoise}) was late by at least
 *   half the send lag at p99 during the same run: the machine's CPUs were contended (other processes, the server on
 *   the same machine), not the client's own work. The run stays valid and the cause is printed beside it.</li>
 *   <li>{@link Cause#CPU_CONTENTION}: the client's event loops waited longer for a CPU than they ran over the run
 *   ({@link LoopCpu}): they had little to do, yet other processes held the CPUs when they had. The probe misses this
 *   under heavy contention, as the scheduler favours a thread that only sleeps. Valid, and the cause is printed.</li>
 *   <li>{@link Cause#CLIENT_BUSY}: otherwise the client's own event loops were too busy to send on time. Invalid.</li>
 * </ul>
 * Without {@code --max-send-lag-ms} the limit fits the machine: {@value #LIMIT_NOISE_FACTOR} times the p99 of the
 * calibration spin before the first run, and never under {@value #MIN_LIMIT_NANOS} ns.
 *
 * @param cause   what the verdict rests on
 * @param invalid whether the run is flagged invalid for it
 * @param message one sentence for the console and the result: the figures, the cause, and what to do
 */
public record SendLagVerdict(Cause cause, boolean invalid, String message) {
    static final long BURST_GAP_NANOS = 1_000_000;
    static final long MIN_LIMIT_NANOS = 1_000_000;
    static final double LIMIT_NOISE_FACTOR = 2;

    /** What a run's send lag is put down to. */
    public enum Cause { NO_SCHEDULE, WITHIN_LIMIT, CONNECTING, BURST, MACHINE_NOISE, CPU_CONTENTION, CLIENT_BUSY }

    /** The limit when the user set none: twice the p99 wake-up lateness the calibration measured, at least 1 ms. */
    static long limitFromCalibration(long calibrationP99Nanos) {
        return Math.max(MIN_LIMIT_NANOS, Math.round(LIMIT_NOISE_FACTOR * calibrationP99Nanos));
    }

    /**
     * @param scheduled          whether sends had intended times (false for rate inf and closed loops)
     * @param lagP99Nanos        p99 send lag over all measured sends
     * @param startLagP99Nanos   p99 of the part of the send lag before the event loop took the request up
     * @param spacedLagP99Nanos  p99 send lag over sends scheduled at least {@link #BURST_GAP_NANOS} after the previous
     *                           one; -1 when there were none
     * @param noiseP99Nanos      p99 lateness of the noise probe during the run; -1 when it took no sample
     * @param loopRunNanos       time the client's event loops ran on a CPU during the run; -1 when unknown
     * @param loopWaitNanos      time they waited, runnable, for a CPU during the run; -1 when unknown
     * @param limitNanos         the limit
     * @param limitFlag          how the limit was set, for the message (the flag, or the calibration)
     */
    static SendLagVerdict judge(boolean scheduled, long lagP99Nanos, long startLagP99Nanos, long spacedLagP99Nanos,
                                long noiseP99Nanos, long loopRunNanos, long loopWaitNanos, long limitNanos,
                                String limitFlag) {
        if (!scheduled) {
            return new SendLagVerdict(Cause.NO_SCHEDULE, false, "send lag not judged: with --request-rate inf or a "
                    + "closed loop there is no schedule to keep");
        }
        String figures = String.format(Locale.ROOT, "p99 send lag %.3f ms %s %s %.3f ms", lagP99Nanos / 1e6,
                lagP99Nanos > limitNanos ? "exceeds" : "within", limitFlag, limitNanos / 1e6);
        if (lagP99Nanos <= limitNanos) {
            return new SendLagVerdict(Cause.WITHIN_LIMIT, false, figures);
        }
        if (startLagP99Nanos <= limitNanos) {
            return new SendLagVerdict(Cause.CONNECTING, false, figures + String.format(Locale.ROOT, ", all of it spent "
                    + "waiting for a connection (requests were taken up on time, p99 %.3f ms): the server was slow to "
                    + "accept connections or all were busy, as a real client would find it (see --max-connections)",
                    startLagP99Nanos / 1e6));
        }
        if (spacedLagP99Nanos >= 0 && spacedLagP99Nanos <= limitNanos) {
            return new SendLagVerdict(Cause.BURST, true, figures + String.format(Locale.ROOT, ": caused by bursts the "
                    + "schedule asked for (sends spaced 1 ms or more were on time, p99 %.3f ms); the burst's latencies "
                    + "include the client's own queue: lower the rate or raise --burstiness, or use more client cores",
                    spacedLagP99Nanos / 1e6));
        }
        if (noiseP99Nanos >= 0 && 2 * noiseP99Nanos >= lagP99Nanos) {
            return new SendLagVerdict(Cause.MACHINE_NOISE, false, figures + String.format(Locale.ROOT, ", but it is "
                    + "this machine's scheduling noise, not the client's work (a probe thread that only sleeps was "
                    + "late by %.3f ms at p99): other processes compete for the CPUs; to measure tighter, run the "
                    + "server on other cores or another machine", noiseP99Nanos / 1e6));
        }
        String loops = loopRunNanos < 0 ? "" : String.format(Locale.ROOT, "; its event loops ran %.0f ms and waited "
                + "%.0f ms for a CPU", loopRunNanos / 1e6, loopWaitNanos / 1e6);
        if (loopRunNanos >= 0 && loopWaitNanos > loopRunNanos) {
            return new SendLagVerdict(Cause.CPU_CONTENTION, false, figures + ", but the client was not busy" + loops
                    + ": other processes (the server, if on this machine) held the CPUs; to measure tighter, give the "
                    + "client cores of its own");
        }
        return new SendLagVerdict(Cause.CLIENT_BUSY, true, figures + String.format(Locale.ROOT, ": the client was too "
                + "busy to send on time (the machine's own noise was only %.3f ms at p99%s): give the client more "
                + "cores or lower the rate", Math.max(0, noiseP99Nanos) / 1e6, loops));
    }
}
