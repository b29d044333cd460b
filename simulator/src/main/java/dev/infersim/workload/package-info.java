/**
 * Workloads shared by the discrete-event simulator and the benchmark client, so both replay the very same requests
 * for the same seed.
 *
 * <p>Entry points: build a {@link dev.infersim.workload.WorkloadSpec} from {@code vllm bench serve}-style options
 * ({@link dev.infersim.workload.WorkloadSpec#builder()}), open it as a {@link dev.infersim.workload.Workload} and
 * iterate its {@link dev.infersim.workload.WorkloadRequest}s. A request carries its open-loop arrival time, lengths,
 * shared-prefix group and seeds from which its prompt token ids are derived on demand; the
 * {@link dev.infersim.workload.arrival.LoadPattern} says how a driver paces them (arrival times and a concurrency cap; a
 * closed loop is an infinite rate with a cap).
 *
 * <p>Parts: {@link dev.infersim.workload.arrival.ArrivalProcess} implementations (Poisson and gamma with vLLM's burstiness,
 * constant, vLLM's count-based ramps, timed ramps, trace replay), {@link dev.infersim.workload.length.LengthDistribution}
 * implementations (fixed, uniform with vLLM's range ratio, clipped log-normal, Zipf, empirical, geometric), and
 * {@link dev.infersim.workload.Dataset}s (random, sharegpt, prefix_repetition, trace, and weighted class mixes from
 * workload profiles in configs/workloads/). The arrival processes are {@link dev.infersim.workload.arrival} and the
 * length laws {@link dev.infersim.workload.length}, leaves this package uses; the datasets stay here, beside the
 * requests they make and the spec they read.
 */
package dev.infersim.workload;
