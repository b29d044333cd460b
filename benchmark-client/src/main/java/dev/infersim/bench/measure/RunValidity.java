package dev.infersim.bench.measure;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.config.RunPlan;
import dev.infersim.result.FlatRecordReader;
import dev.infersim.result.LatencyStats;
import dev.infersim.workload.Workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Whether a run's measurement can be trusted, and why not: the initial test request, the share of failed requests
 * against {@code --max-failure-rate}, the sends against the requested arrival process ({@link ArrivalFit}), the
 * client's timing error against the latencies ({@link TimingError}), with {@code --strict-timing} the send-lag verdict
 * ({@link SendLagVerdict}), and an interrupt. Written as {@code infersim_valid}, {@code infersim_invalid_reasons},
 * {@code infersim_validity}, {@code infersim_max_send_lag_ms} and {@code infersim_send_lag_verdict}.
 */
public final class RunValidity {
    private final List<String> invalid = new ArrayList<>();
    private final BenchConfig config;
    private final String unjudged;
    private final ArrivalFit arrivals;
    private final TimingError timing;
    private final SendLagVerdict lag;
    private final boolean fitted;
    private final long limit;

    /**
     * @param w           the run's measured window
     * @param interrupted whether the run was interrupted
     * @param calibration wake-up lateness of an idle probe thread before the first run
     * @param noise       wake-up lateness of the noise probe during the run
     * @param loops       the event loops' time on a CPU and waiting for one during the run ({@link LoopCpu})
     * @param asked       the requests the run was asked to measure
     * @param probeError  why the initial test request failed (nothing else was sent), or null
     */
    public RunValidity(BenchConfig config, Workload measured, RunPlan plan, MeasuredWindow w, boolean interrupted,
                       LatencyStats calibration, LatencyStats noise, long[] loops, long asked, String probeError) {
        this.config = config;
        if (probeError != null) {
            invalid.add(probeError + "; nothing else was sent");
        }
        String failures = failureReason(w);
        if (failures != null) {
            invalid.add(failures);
        }
        unjudged = arrivalsNotJudged(measured, plan, w);
        arrivals = unjudged == null ? w.arrivals(measured.load().requestRatePerS(),
                measured.load().burstiness()) : null;
        if (arrivals != null && arrivals.off()) {
            invalid.add("the requests did not go out as the requested arrival process: " + arrivals.describe());
        }
        timing = w.stats().completed() == 0 ? null : TimingError.judge(sendLagP99(measured, w), readDelayP99(w),
                nanos(w.stats().ttft().medianMs()), w.stats().itl().count() == 0 ? -1 : nanos(w.stats().itl().meanMs()));
        if (timing != null && timing.material() && !config.strictTiming()) {
            invalid.add(timing.describe());
        }
        fitted = config.maxSendLagNanos() == BenchConfig.FIT_TO_MACHINE;
        limit = fitted ? SendLagVerdict.limitFromCalibration(nanos(calibration.percentileMs(99)))
                : config.maxSendLagNanos();
        lag = !config.strictTiming() ? null : SendLagVerdict.judge(hasSchedule(measured),
                nanos(w.sendLag().percentileMs(99)), nanos(w.startLag().percentileMs(99)),
                w.spacedSendLag().count() == 0 ? -1 : nanos(w.spacedSendLag().percentileMs(99)),
                noise.count() == 0 ? -1 : nanos(noise.percentileMs(99)), loops[0], loops[1], limit,
                fitted ? "the machine-fitted limit" : "--max-send-lag-ms");
        if (lag != null && lag.invalid() && w.sendLag().count() > 0) {
            invalid.add(lag.message());
        }
        if (interrupted) {
            invalid.add("the run was interrupted: " + w.sent() + " of " + asked + " requests sent, " + w.cancelled()
                    + " of them cut off in flight (cancelled)");
        }
    }

    /**
     * The send side of the client's error at p99: up to the request's bytes being in the socket where the writes were
     * timed; else, with a schedule, up to the send.
     */
    private static long sendLagP99(Workload measured, MeasuredWindow w) {
        if (w.writeLag().count() > 0) {
            return nanos(w.writeLag().percentileMs(99));
        }
        return hasSchedule(measured) && w.sendLag().count() > 0 ? nanos(w.sendLag().percentileMs(99)) : -1;
    }

    /**
     * The read side at p99: the larger of every read's and the first reads' (a TTFT ends at a first read, which may be
     * later than most: the first tokens of many streams come together); -1 where reads were not bounded.
     */
    private static long readDelayP99(MeasuredWindow w) {
        if (w.readLateness().count() == 0) {
            return -1;
        }
        return nanos(Math.max(w.readLateness().percentileMs(99), w.firstReadLateness().percentileMs(99)));
    }

    /** Why the run is invalid, in the order found; empty when it is valid. */
    public List<String> invalid() {
        return List.copyOf(invalid);
    }

    /** {@code infersim_validity}: the arrival-process test (or why it was not made), the timing error, the mode. */
    public Validity validity() {
        // no send instants without a reason: the measured window never began (the test request failed, an interrupt)
        return new Validity(arrivals == null ? new Arrivals(false, unjudged == null ? "no measured request was sent"
                : unjudged, null) : new Arrivals(true, null,
                new ArrivalTest(arrivals.sends(), arrivals.requestedRate(), finite(arrivals.achievedRate()),
                        arrivals.tolerance(), finite(arrivals.gapCv()), finite(arrivals.ksD()),
                        finite(arrivals.ksP()), ArrivalFit.ALPHA, arrivals.rateOff(), arrivals.gapsOff(),
                        arrivals.describe())),
                timing == null ? null : timing(timing), config.strictTiming());
    }

    /** {@code infersim_max_send_lag_ms}: the send-lag limit, judged only with --strict-timing. */
    public Double maxSendLagMs() {
        return lag == null ? null : limit / 1e6;
    }

    /** {@code infersim_send_lag_verdict}, or null without --strict-timing. */
    public LagJudgement sendLagVerdict() {
        return lag == null ? null : new LagJudgement(lag.cause().name().toLowerCase(Locale.ROOT), lag.message(),
                fitted ? "calibration" : "flag");
    }

    /** Why the share of failed requests makes the run invalid, or null when it is within --max-failure-rate. */
    private String failureReason(MeasuredWindow w) {
        long failed = w.stats().failed();
        long ended = w.stats().completed() + failed;
        if (failed == 0 || failed <= config.maxFailureRate() * ended) {
            return null;
        }
        return String.format(Locale.ROOT, "%d of %d requests failed (%.1f%%), over --max-failure-rate %s; "
                + "first: %s", failed, ended, 100.0 * failed / ended, config.maxFailureRate(), w.errors().describe().get(0));
    }

    /**
     * Why the sends cannot be tested against a stationary arrival process, or null when they can: only a finite
     * --request-rate without ramp, trace or rate schedule asks for one, a shard sends a thinned part of it, and a
     * concurrency cap that held requests back moved their sends on purpose.
     */
    private static String arrivalsNotJudged(Workload w, RunPlan plan, MeasuredWindow window) {
        if (w.isClosedLoop() || Double.isInfinite(w.load().requestRatePerS())) {
            return "no request rate: everything at once or a closed loop";
        }
        if (w.load().rampUp() != null || w.load().schedule() != null || w.dataset().recordedArrivals() != null) {
            return "the rate changes over the run (a ramp, a rate schedule or a trace)";
        }
        if (plan.shard() != null && !plan.shard().isWhole()) {
            return "a shard sends every N-th request of the schedule";
        }
        if (window.clientQueued() > 0) {
            return window.clientQueued() + " requests waited for a --max-concurrency slot, which delays sends on purpose";
        }
        return null;
    }

    private static Timing timing(TimingError t) {
        return new Timing(t.sendLagP99Nanos() < 0 ? null : t.sendLagP99Nanos() / 1e6,
                t.readDelayP99Nanos() < 0 ? null : t.readDelayP99Nanos() / 1e6, t.ttftErrorNanos() / 1e6,
                t.ttftP50Nanos() / 1e6, t.meanItlNanos() < 0 ? null : t.meanItlNanos() / 1e6,
                TimingError.MATERIAL_SHARE, t.material(), t.describe());
    }

    private static Double finite(double x) {
        return Double.isFinite(x) ? x : null;
    }

    /** Whether requests had intended send times: not so for a closed loop or everything at once (rate inf). */
    private static boolean hasSchedule(Workload w) {
        return !w.isClosedLoop() && (Double.isFinite(w.load().requestRatePerS()) || w.load().rampUp() != null
                || w.dataset().recordedArrivals() != null);
    }

    private static long nanos(double ms) {
        return Math.round(ms * 1e6);
    }

    /**
     * {@code infersim_validity}: the arrival-process test, the client's timing error (null without a completed
     * request) and whether --strict-timing judged send lag.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Validity(Arrivals arrivals, Timing timing, boolean strictTiming) {
    }

    /**
     * Whether the sends were tested against the requested arrival process: why not ({@code reason}), or the test.
     *
     * @param reason null when judged (and then not written)
     * @param test   null when not judged
     */
    @JsonDeserialize(using = FlatRecordReader.class)
    public record Arrivals(boolean judged, @JsonInclude(JsonInclude.Include.NON_NULL) String reason,
                           @JsonUnwrapped ArrivalTest test) {
    }

    /** The test of the sends against the arrival process ({@link ArrivalFit}); null where a figure is not finite. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record ArrivalTest(int sends, double requestedRatePerS, Double achievedRatePerS, double rateTolerance,
                              Double gapCv, Double ksD, @JsonProperty("ks_p_value") Double ksPValue,
                              double significance, boolean rateOff,
                              boolean gapsOff, String message) {
    }

    /** The client's timing error against the latencies ({@link TimingError}), in ms; null where not measured. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Timing(Double sendLagP99Ms, Double readDelayP99Ms, double ttftErrorP99Ms, double ttftP50Ms,
                         Double meanItlMs, double materialShare, boolean material, String message) {
    }

    /** {@code infersim_send_lag_verdict}: the cause ({@link SendLagVerdict.Cause}), its message, where the limit came from. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record LagJudgement(String cause, String message, String limitSource) {
    }
}
