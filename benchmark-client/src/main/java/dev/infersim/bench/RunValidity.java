package dev.infersim.bench;

import dev.infersim.result.LatencyStats;
import dev.infersim.workload.Workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Whether a run's measurement can be trusted, and why not: the initial test request, the share of failed requests
 * against {@code --max-failure-rate}, the sends against the requested arrival process ({@link ArrivalFit}), the
 * client's timing error against the latencies ({@link TimingError}), with {@code --strict-timing} the send-lag verdict
 * ({@link SendLagVerdict}), and an interrupt. Written as {@code infersim_valid}, {@code infersim_invalid_reasons},
 * {@code infersim_validity}, {@code infersim_max_send_lag_ms} and {@code infersim_send_lag_verdict}.
 */
final class RunValidity {
    /** Why the run is invalid, in the order found; empty when it is valid. */
    final List<String> invalid = new ArrayList<>();
    private final BenchConfig config;
    private final String unjudged;
    private final ArrivalFit arrivals;
    private final TimingError timing;
    private final SendLagVerdict lag;
    private final boolean fitted;
    private final long limit;

    /**
     * @param calibration wake-up lateness of an idle probe thread before the first run
     * @param noise       wake-up lateness of the noise probe during the run
     * @param readDelay   how late the event loops ran what was due during the run ({@link LoopLateness})
     * @param loops       the event loops' time on a CPU and waiting for one during the run ({@link LoopCpu})
     * @param asked       the requests the run was asked to measure
     * @param probeError  why the initial test request failed (nothing else was sent), or null
     */
    RunValidity(BenchConfig config, Workload measured, RunPlan plan, LoadRun.Phase phase, LatencyStats calibration,
                LatencyStats noise, LatencyStats readDelay, long[] loops, long asked, String probeError) {
        this.config = config;
        MeasuredWindow w = phase.window();
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
        timing = w.stats.completed() == 0 ? null : TimingError.judge(
                hasSchedule(measured) && w.sendLag.count() > 0 ? nanos(w.sendLag.percentileMs(99)) : -1,
                readDelay.count() == 0 ? -1 : nanos(readDelay.percentileMs(99)), nanos(w.stats.ttft().medianMs()),
                w.stats.itl().count() == 0 ? -1 : nanos(w.stats.itl().meanMs()));
        if (timing != null && timing.material() && !config.strictTiming()) {
            invalid.add(timing.describe());
        }
        fitted = config.maxSendLagNanos() == BenchConfig.FIT_TO_MACHINE;
        limit = fitted ? SendLagVerdict.limitFromCalibration(nanos(calibration.percentileMs(99)))
                : config.maxSendLagNanos();
        lag = !config.strictTiming() ? null : SendLagVerdict.judge(hasSchedule(measured),
                nanos(w.sendLag.percentileMs(99)), nanos(w.startLag.percentileMs(99)),
                w.spacedSendLag.count() == 0 ? -1 : nanos(w.spacedSendLag.percentileMs(99)),
                noise.count() == 0 ? -1 : nanos(noise.percentileMs(99)), loops[0], loops[1], limit,
                fitted ? "the machine-fitted limit" : "--max-send-lag-ms");
        if (lag != null && lag.invalid() && w.sendLag.count() > 0) {
            invalid.add(lag.message());
        }
        if (phase.interrupted()) {
            invalid.add("the run was interrupted: " + w.sent() + " of " + asked + " requests sent, " + w.cancelled
                    + " of them cut off in flight (cancelled)");
        }
    }

    /** {@code infersim_validity}: the arrival-process test (or why it was not made), the timing error, the mode. */
    Map<String, Object> validityJson() {
        return BenchResultAssembly.ordered("arrivals", arrivals == null
                        ? BenchResultAssembly.ordered("judged", false, "reason", unjudged) : arrivalsJson(arrivals),
                "timing", timing == null ? null : timingJson(timing), "strict_timing", config.strictTiming());
    }

    /** {@code infersim_max_send_lag_ms}: the send-lag limit, judged only with --strict-timing. */
    Double maxSendLagMs() {
        return lag == null ? null : limit / 1e6;
    }

    /** {@code infersim_send_lag_verdict}, or null without --strict-timing. */
    Map<String, Object> sendLagVerdictJson() {
        return lag == null ? null : BenchResultAssembly.ordered("cause",
                lag.cause().name().toLowerCase(Locale.ROOT), "message", lag.message(),
                "limit_source", fitted ? "calibration" : "flag");
    }

    /** Why the share of failed requests makes the run invalid, or null when it is within --max-failure-rate. */
    private String failureReason(MeasuredWindow w) {
        long failed = w.stats.failed();
        long ended = w.stats.completed() + failed;
        if (failed == 0 || failed <= config.maxFailureRate() * ended) {
            return null;
        }
        return String.format(Locale.ROOT, "%d of %d requests failed (%.1f%%), over --max-failure-rate %s; "
                + "first: %s", failed, ended, 100.0 * failed / ended, config.maxFailureRate(), w.errors.describe().get(0));
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
        if (window.clientQueued > 0) {
            return window.clientQueued + " requests waited for a --max-concurrency slot, which delays sends on purpose";
        }
        return null;
    }

    private static Map<String, Object> arrivalsJson(ArrivalFit a) {
        return BenchResultAssembly.ordered("judged", true, "sends", a.sends(), "requested_rate_per_s",
                a.requestedRate(), "achieved_rate_per_s", finite(a.achievedRate()), "rate_tolerance", a.tolerance(),
                "gap_cv", finite(a.gapCv()), "ks_d", finite(a.ksD()), "ks_p_value", finite(a.ksP()),
                "significance", ArrivalFit.ALPHA, "rate_off", a.rateOff(), "gaps_off", a.gapsOff(),
                "message", a.describe());
    }

    private static Map<String, Object> timingJson(TimingError t) {
        return BenchResultAssembly.ordered("send_lag_p99_ms", t.sendLagP99Nanos() < 0 ? null : t.sendLagP99Nanos() / 1e6,
                "read_delay_p99_ms", t.readDelayP99Nanos() < 0 ? null : t.readDelayP99Nanos() / 1e6,
                "ttft_error_p99_ms", t.ttftErrorNanos() / 1e6, "ttft_p50_ms", t.ttftP50Nanos() / 1e6,
                "mean_itl_ms", t.meanItlNanos() < 0 ? null : t.meanItlNanos() / 1e6,
                "material_share", TimingError.MATERIAL_SHARE, "material", t.material(), "message", t.describe());
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
}
