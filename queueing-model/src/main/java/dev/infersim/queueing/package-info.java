/**
 * Closed-form queueing models for LLM serving: classic single- and multi-server queues
 * (M/M/1, M/M/c with Erlang C, M/G/1 Pollaczek-Khinchine and M/D/1, Kingman and
 * Allen-Cunneen approximations, Little's law), the continuous-batching birth-death chain
 * ({@link dev.infersim.queueing.BatchingServer}, {@link dev.infersim.queueing.ContinuousBatchingModel}),
 * one request at a time from a measured service distribution ({@link dev.infersim.queueing.SequentialServiceModel}),
 * and capacity planning ({@link dev.infersim.queueing.CapacityPlanner}, {@link dev.infersim.queueing.FleetPlan}).
 *
 * <p>The package is pure mathematics: it knows nothing of the serving engine. Callers derive the
 * parameters (for example the iteration times per batch size, {@link dev.infersim.queueing.TabulatedIterationTimes},
 * from an engine's cost model) and pass numbers in. Rates are per second ({@code PerS}), times are seconds ({@code Seconds}).
 * A model whose arrival rate reaches its capacity has no stationary distribution; constructing
 * one throws {@link dev.infersim.queueing.UnstableQueueException}.
 */
package dev.infersim.queueing;
