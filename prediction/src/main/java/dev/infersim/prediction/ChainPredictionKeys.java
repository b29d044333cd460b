package dev.infersim.prediction;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * The keys {@code predict} adds to its result from the engine model's continuous-batching chain
 * ({@link EnginePrediction}), each prefixed {@code infersim_} there. A null key is not written: below saturation there
 * is no saturation reason, past it no utilization, wait or batch; the trust note only near saturation; the fleet only
 * when the SLO can be met, its cost only with a price per GPU-hour.
 *
 * @param trustNote            how far off the prediction was found this near saturation
 * @param sloBindingMetric     the objective that bounds the rate meeting the SLO
 * @param fleetTargetRatePerS  the rate the fleet is sized for
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record ChainPredictionKeys(boolean saturated, String saturationReason, Double utilization, String trustNote,
                                  Double probabilityOfWait, Double meanQueueTimeMs, Double meanBatchSize,
                                  Double meanRequestsInSystem, double saturationRatePerS,
                                  double saturationOutputTokensPerS, int batchLimit, boolean kvLimitsBatch,
                                  double meanPromptTokens, double meanOutputTokens, long kvCacheTokens,
                                  double maxRateMeetingSloPerS, String sloBindingMetric, Double fleetTargetRatePerS,
                                  Integer fleetReplicas, Integer fleetGpus, Double dollarsPerMillionOutputTokens) {
}
