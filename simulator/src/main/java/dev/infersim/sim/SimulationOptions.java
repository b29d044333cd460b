package dev.infersim.sim;

import dev.infersim.common.ConfigException;
import dev.infersim.result.GoodputSlo;
/**
 * How a simulation measures, apart from the workload and the deployment.
 *
 * @param numWarmups            vLLM's {@code --num-warmups}: the first N requests of the stream are not measured
 * @param warmupDurationNanos   requests scheduled before this time are not measured either (0 = none)
 * @param slo                   goodput objectives
 * @param timelineIntervalNanos first sampling interval of the timelines (it doubles as the run grows)
 * @param timelinePoints        most timeline points kept (even, >= 2)
 * @param dollarsPerGpuHour     price of one GPU-hour for infersim_cost_dollars; NaN = no cost reported
 */
public record SimulationOptions(long numWarmups, long warmupDurationNanos, GoodputSlo slo, long timelineIntervalNanos,
                                int timelinePoints, double dollarsPerGpuHour) {

    public SimulationOptions {
        ConfigException.check(numWarmups >= 0, "--num-warmups must be >= 0, got %d", numWarmups);
        ConfigException.check(warmupDurationNanos >= 0,
                "--warmup-duration must be >= 0 s, got %d ns", warmupDurationNanos);
        if (slo == null) {
            throw new IllegalArgumentException("slo must not be null (use GoodputSlo.NONE)");
        }
        ConfigException.check(Double.isNaN(dollarsPerGpuHour) || (dollarsPerGpuHour >= 0 && Double.isFinite(dollarsPerGpuHour)),
                "--dollars-per-gpu-hour must be >= 0, got %s", dollarsPerGpuHour);
        if (timelineIntervalNanos < 1 || timelinePoints < 2 || timelinePoints % 2 != 0) {
            throw new IllegalArgumentException("timeline needs an interval >= 1 ns and an even number of points >= 2, got "
                    + timelineIntervalNanos + " ns, " + timelinePoints);
        }
    }

    /** No warmup, no SLO, timelines from 10 ms intervals, at most 1024 points. */
    public static SimulationOptions defaults() {
        return new SimulationOptions(0, 0, GoodputSlo.NONE, 10_000_000L, 1024, Double.NaN);
    }

    public SimulationOptions withWarmups(long n) {
        return new SimulationOptions(n, warmupDurationNanos, slo, timelineIntervalNanos, timelinePoints, dollarsPerGpuHour);
    }

    public SimulationOptions withWarmupDurationNanos(long nanos) {
        return new SimulationOptions(numWarmups, nanos, slo, timelineIntervalNanos, timelinePoints, dollarsPerGpuHour);
    }

    public SimulationOptions withSlo(GoodputSlo s) {
        return new SimulationOptions(numWarmups, warmupDurationNanos, s, timelineIntervalNanos, timelinePoints, dollarsPerGpuHour);
    }

    public SimulationOptions withDollarsPerGpuHour(double dollars) {
        return new SimulationOptions(numWarmups, warmupDurationNanos, slo, timelineIntervalNanos, timelinePoints, dollars);
    }
}
