package dev.infersim.sim;

import dev.infersim.result.ServingReport;
import dev.infersim.result.LatencySeries;
import dev.infersim.result.ReplicaLatency;
import dev.infersim.result.RunInfo;
import dev.infersim.result.ServingStats;
import dev.infersim.engine.EngineCore;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The outcome of a {@link Simulation}: the measured window's client-side statistics, the engine's own counters, the
 * timelines, the saturation verdict, and the run-wide quantities of Little's law (L = lambda W: time-average requests in
 * the engine, arrival rate, mean time in the engine, over the whole run from first send to last completion).
 *
 * @param stats                 measured requests only (warmups excluded)
 * @param durationNanos         measured window: first measured send to last measured completion
 * @param timeline              sampled engine state
 * @param saturation            whether arrivals outpaced service
 * @param replicas              the replicas, for their engine counters
 * @param requestsSent          every request sent, warmups included
 * @param meanRequestsInSystem  L: time-average number of requests sent but not finished
 * @param arrivalRatePerS       lambda: requests sent per second of the run
 * @param meanSojournNanos      W: mean time from send to completion, over all requests
 * @param unmeasuredRequests    warmup requests left out of the statistics
 * @param stopped               true when {@link Simulation#stop()} ended the run before the workload's last request
 * @param replicaSeries         ready and desired replicas over time
 * @param gpuSeconds            GPU-seconds the replicas held, cold starts included
 * @param latencySeries         TTFT and SLO attainment over time, measured requests only
 * @param dollarsPerGpuHour     price of a GPU-hour; NaN when none was given
 * @param disaggregation        the prefill and decode pools of a disaggregated run; null for an aggregated one
 */
public record SimulationResult(ServingStats stats, long durationNanos, Timeline timeline, SaturationVerdict saturation,
                               Replica[] replicas, long requestsSent, double meanRequestsInSystem,
                               double arrivalRatePerS, double meanSojournNanos, long unmeasuredRequests,
                               boolean stopped, ReplicaSeries replicaSeries, double gpuSeconds,
                               LatencySeries latencySeries, double dollarsPerGpuHour, DisaggregatedFleet disaggregation) {

    /** The vLLM-schema result with the simulator's keys appended. */
    public ServingReport<SimulatorKeys> report(RunInfo info) {
        return ServingReport.of(info, stats, durationNanos, simulatorKeys());
    }

    /** Keys only the simulator knows, written prefixed {@code infersim_}. */
    public SimulatorKeys simulatorKeys() {
        long steps = 0;
        long preemptions = 0;
        long queried = 0;
        long hits = 0;
        long peakWaiting = 0;
        double peakKv = 0;
        Map<String, ReplicaLatency> perReplica = new LinkedHashMap<>();
        for (Replica r : replicas) {
            EngineCore e = r.engine();
            steps += e.steps();
            preemptions += e.preemptions();
            queried += e.kvCache().queriedTokens();
            hits += e.kvCache().hitTokens();
            peakWaiting = Math.max(peakWaiting, r.peakWaiting());
            peakKv = Math.max(peakKv, r.peakKvUsage());
            perReplica.put(Integer.toString(r.id()), r.servedSummary());
        }
        return new SimulatorKeys(saturation.saturated(), saturation.reason(),
                Double.isNaN(saturation.queueGrowth()) ? null : (double) Math.round(saturation.queueGrowth()),
                saturation.arrivalsInHalf(), replicaSeries.points(), perReplica, gpuSeconds,
                Double.isNaN(dollarsPerGpuHour) ? null : gpuSeconds / 3600 * dollarsPerGpuHour, unmeasuredRequests,
                stopped, steps, preemptions, queried == 0 ? 0.0 : (double) hits / queried, peakKv, peakWaiting,
                meanRequestsInSystem, finiteOrNull(stats.steadyRequestThroughput()),
                finiteOrNull(stats.steadyOutputThroughput()), finiteOrNull(stats.steadySendRate()),
                disaggregation == null ? null : disaggregation.pools(spanSeconds()), timeline.columns(),
                latencySeries.buckets(), null);
    }

    /** Seconds every replica of a fixed fleet held its GPUs: the GPU-seconds over the GPUs. */
    private double spanSeconds() {
        int gpus = 0;
        for (Replica r : replicas) {
            gpus += r.engine().deployment().tensorParallelSize();
        }
        return gpus == 0 ? 0 : gpuSeconds / gpus;
    }

    private static Double finiteOrNull(double v) {
        return Double.isNaN(v) ? null : v;
    }

    /** Relative error of Little's law, |L - lambda W| / L; 0 for an empty run. */
    public double littlesLawError() {
        double lambdaW = arrivalRatePerS * meanSojournNanos / 1e9;
        return meanRequestsInSystem == 0 ? 0 : Math.abs(meanRequestsInSystem - lambdaW) / meanRequestsInSystem;
    }
}
