/**
 * When requests are sent: {@link dev.infersim.workload.arrival.ArrivalProcess} implementations (Poisson and gamma with
 * vLLM's burstiness, constant, immediate, vLLM's count-based ramps, timed ramps and rate schedules, trace replay) and the
 * {@link dev.infersim.workload.arrival.LoadPattern} that picks one and caps concurrency. Uses only
 * {@link dev.infersim.common}; the rest of {@link dev.infersim.workload} uses it.
 */
package dev.infersim.workload.arrival;
