/**
 * What a bench run is asked to do, as plain data: the endpoint, model, timeouts, SLOs and timing rules
 * ({@link dev.infersim.bench.config.BenchConfig}) and the run's warm-up, duration, shard and metadata
 * ({@link dev.infersim.bench.config.RunPlan}). It uses no other package of the client, so every other one may read it.
 */
package dev.infersim.bench.config;
