/**
 * The engine's closed-form predictions: the models of {@code dev.infersim.queueing} with their parameters derived from
 * a deployment's own cost model, scheduler settings and KV cache ({@link dev.infersim.prediction.EnginePrediction}),
 * from fixed latencies as an M/G/c queue ({@link dev.infersim.prediction.FixedPrediction}), and from a workload's
 * measured lengths ({@link dev.infersim.prediction.WorkloadMoments}), with {@code predict --explain}'s derivation in
 * words ({@link dev.infersim.prediction.PredictionExplanation}). The queueing model knows nothing of the engine; this
 * package is where the two meet, and its tests hold the predictions against the simulator running the same engine.
 */
package dev.infersim.prediction;
