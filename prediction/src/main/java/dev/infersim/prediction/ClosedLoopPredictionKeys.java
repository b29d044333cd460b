package dev.infersim.prediction;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * The keys {@code predict --max-concurrency N} adds to its result from the closed-loop batching model
 * ({@link EnginePrediction#closedLoop}), each prefixed {@code infersim_} there: the clients, how their arrivals come
 * ({@link dev.infersim.queueing.ClosedLoopBatchingModel.Regime}: lock_step, cohort or dissolved), the round their start's
 * cohort dissolves at (null in lock step), the groups a lock step prefills in (null outside it), the batch they keep,
 * the mean wait, requests in the engine (throughput x mean E2EL, Little's law), and what the model was derived from.
 * Null keys are left out, so a result written before the regime keys reads and writes back unchanged.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record ClosedLoopPredictionKeys(int closedLoopClients, String closedLoopRegime, Double cohortDissolvesAtRound,
                                       Integer lockStepGroups, double meanBatchSize, double meanQueueTimeMs,
                                       double meanRequestsInSystem, int batchLimit, double meanPromptTokens,
                                       double meanOutputTokens, long kvCacheTokens) {
}
