/**
 * The basics every other package shares and that know nothing of engines, workloads or results: the user-fixable
 * {@link dev.infersim.common.ConfigException}, one-line JSON syntax errors ({@link dev.infersim.common.JsonSyntax}),
 * the one random number generator, {@link dev.infersim.common.SplitMix64}, the one clock with a precise wait for an
 * instant, {@link dev.infersim.common.NanoClock}, and the bound on how late an event loop read what reached its socket,
 * {@link dev.infersim.common.ReadLateness}, which the mock server and the benchmark client both put on their reads. It imports no other infersim package,
 * so {@code engine}, {@code workload}, {@code result} and {@code sim} can all depend on it without a cycle.
 */
package dev.infersim.common;
