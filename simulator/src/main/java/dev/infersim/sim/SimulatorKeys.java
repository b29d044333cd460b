package dev.infersim.sim;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.infersim.result.LatencySeries;
import dev.infersim.result.ReplicaLatency;

import java.util.Map;

/**
 * The keys only the simulator writes into a result, each prefixed {@code infersim_} there: the saturation verdict
 * ({@link SaturationVerdict}), the fleet's replicas over time and what each served, GPU-seconds and their cost, the
 * engines' counters and peaks, Little's law's L over the run, the steady-state rates, a disaggregated run's pools, the
 * sampled timelines, latency over time, and the per-request file of {@code --save-detailed}.
 *
 * @param queueGrowthRequests      the queue's growth over the second half, rounded; null where it was not fitted
 * @param perReplica               by replica id
 * @param costDollars              null without a price per GPU-hour (and then not written)
 * @param steadyRequestThroughput  null where there is no steady span (as for the next two)
 * @param disaggregation           null for an aggregated fleet (and then not written)
 * @param detailedFile             where the per-request rows were written, for {@code compare}; null (not written)
 *                                 without {@code --save-detailed}
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record SimulatorKeys(boolean saturated, String saturationReason, Double queueGrowthRequests,
                            long arrivalsInSecondHalf, ReplicaSeries.Points replicas,
                            Map<String, ReplicaLatency> perReplica, double gpuSeconds,
                            @JsonInclude(JsonInclude.Include.NON_NULL) Double costDollars, long warmupRequests,
                            boolean interrupted, long engineSteps, long enginePreemptions,
                            double enginePrefixCacheHitRate, double kvCacheUsagePeak, long waitingPeak,
                            double meanRequestsInSystem, Double steadyRequestThroughput,
                            Double steadyOutputThroughput, Double steadySendRate,
                            @JsonInclude(JsonInclude.Include.NON_NULL) DisaggregatedFleet.Pools disaggregation,
                            Timeline.Columns timelines, LatencySeries.Buckets latencyOverTime,
                            @JsonInclude(JsonInclude.Include.NON_NULL) String detailedFile) {

    /** These keys naming the run's per-request file. */
    public SimulatorKeys withDetailedFile(String file) {
        return new SimulatorKeys(saturated, saturationReason, queueGrowthRequests, arrivalsInSecondHalf, replicas,
                perReplica, gpuSeconds, costDollars, warmupRequests, interrupted, engineSteps, enginePreemptions,
                enginePrefixCacheHitRate, kvCacheUsagePeak, waitingPeak, meanRequestsInSystem, steadyRequestThroughput,
                steadyOutputThroughput, steadySendRate, disaggregation, timelines, latencyOverTime, file);
    }
}
