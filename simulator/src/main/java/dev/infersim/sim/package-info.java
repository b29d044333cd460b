/**
 * The discrete-event simulator: {@link dev.infersim.sim.Simulation} drives one or more engine
 * {@link dev.infersim.sim.Replica}s behind a {@link dev.infersim.sim.Router} through a workload in virtual time, and
 * measures what {@code vllm bench serve} would. The result model ({@link dev.infersim.sim.LatencyStats},
 * {@link dev.infersim.sim.ServingStats}, {@link dev.infersim.sim.RequestRecord}, {@link dev.infersim.sim.RunInfo},
 * {@link dev.infersim.sim.BenchmarkReport}, {@link dev.infersim.sim.DetailWriter}) knows nothing of the engine, so the
 * benchmark client writes the same schema from measured numbers.
 */
package dev.infersim.sim;
