package dev.infersim.result;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * What one replica of a fleet served, in a result's per-replica block: measured requests, their mean and p99 TTFT
 * and mean queue time (ms), each null where the replica has no sample of it.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record ReplicaLatency(long requests, Double meanTtftMs, Double p99TtftMs, Double meanQueueMs) {
}
