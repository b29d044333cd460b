package dev.infersim.sim;

import dev.infersim.result.BenchmarkReport;
import dev.infersim.result.LatencySeries;
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
    public BenchmarkReport report(RunInfo info) {
        return BenchmarkReport.of(info, stats, durationNanos, simulatorKeys());
    }

    /** Keys only the simulator knows, all prefixed {@code infersim_}. */
    public Map<String, Object> simulatorKeys() {
        long steps = 0;
        long preemptions = 0;
        long queried = 0;
        long hits = 0;
        long peakWaiting = 0;
        double peakKv = 0;
        for (Replica r : replicas) {
            EngineCore e = r.engine();
            steps += e.steps();
            preemptions += e.preemptions();
            queried += e.kvCache().queriedTokens();
            hits += e.kvCache().hitTokens();
            peakWaiting = Math.max(peakWaiting, r.peakWaiting());
            peakKv = Math.max(peakKv, r.peakKvUsage());
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("infersim_saturated", saturation.saturated());
        m.put("infersim_saturation_reason", saturation.reason());
        m.put("infersim_queue_growth_requests",
                Double.isNaN(saturation.queueGrowth()) ? null : (double) Math.round(saturation.queueGrowth()));
        m.put("infersim_arrivals_in_second_half", saturation.arrivalsInHalf());
        m.put("infersim_replicas", replicaSeries.toJson());
        Map<String, Object> perReplica = new LinkedHashMap<>();
        for (Replica r : replicas) {
            perReplica.put(Integer.toString(r.id()), r.servedSummary());
        }
        m.put("infersim_per_replica", perReplica);
        m.put("infersim_gpu_seconds", gpuSeconds);
        if (!Double.isNaN(dollarsPerGpuHour)) {
            m.put("infersim_cost_dollars", gpuSeconds / 3600 * dollarsPerGpuHour);
        }
        m.put("infersim_warmup_requests", unmeasuredRequests);
        m.put("infersim_interrupted", stopped);
        m.put("infersim_engine_steps", steps);
        m.put("infersim_engine_preemptions", preemptions);
        m.put("infersim_engine_prefix_cache_hit_rate", queried == 0 ? 0.0 : (double) hits / queried);
        m.put("infersim_kv_cache_usage_peak", peakKv);
        m.put("infersim_waiting_peak", peakWaiting);
        m.put("infersim_mean_requests_in_system", meanRequestsInSystem);
        m.put("infersim_steady_request_throughput", finiteOrNull(stats.steadyRequestThroughput()));
        m.put("infersim_steady_output_throughput", finiteOrNull(stats.steadyOutputThroughput()));
        m.put("infersim_steady_send_rate", finiteOrNull(stats.steadySendRate()));
        if (disaggregation != null) {
            m.put("infersim_disaggregation", disaggregation.toJson(spanSeconds()));
        }
        m.put("infersim_timelines", timeline.toJson());
        m.put("infersim_latency_over_time", latencySeries.toJson());
        return m;
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
