/**
 * The basics every other package shares and that know nothing of engines, workloads or results: the user-fixable
 * {@link dev.infersim.common.ConfigException}, one-line JSON syntax errors ({@link dev.infersim.common.JsonSyntax}),
 * the one random number generator, {@link dev.infersim.common.SplitMix64}, and the one clock with a precise wait for an
 * instant, {@link dev.infersim.common.NanoClock}. It imports no other infersim package,
 * so {@code engine}, {@code workload}, {@code result} and {@code sim} can all depend on it without a cycle.
 */
package dev.infersim.common;
