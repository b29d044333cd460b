/**
 * The discrete-event simulator: {@link dev.infersim.sim.Simulation} drives one or more engine
 * {@link dev.infersim.sim.Replica}s behind a {@link dev.infersim.sim.Router} through a workload in virtual time, and
 * measures what {@code vllm bench serve} would, into the result schema of {@link dev.infersim.result}.
 */
package dev.infersim.sim;
