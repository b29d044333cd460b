package dev.infersim.prediction;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * The keys {@code predict --timing fixed} adds to its result from the M/G/c queue of {@link FixedPrediction}, each
 * prefixed {@code infersim_} there. Below saturation the queue's utilization, wait and occupancy (and no saturation
 * reason); past it the reason (and none of those), which are then not written.
 *
 * @param batchLimit the slots, c = max-num-seqs
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record FixedPredictionKeys(boolean saturated, String saturationReason, Double utilization,
                                  Double probabilityOfWait, Double meanQueueTimeMs, Double p99QueueTimeMs,
                                  Double meanRequestsInSystem, double saturationRatePerS,
                                  double saturationOutputTokensPerS, int batchLimit, double meanPromptTokens,
                                  double meanOutputTokens, double serviceTimeMeanMs, double serviceTimeScv,
                                  double timeToFirstTokenMs, double interTokenLatencyMs) {
}
