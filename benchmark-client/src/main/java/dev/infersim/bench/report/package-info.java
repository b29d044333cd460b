/**
 * What the user gets from runs: a run's result assembled from its windows and verdicts
 * ({@link dev.infersim.bench.report.BenchResultAssembly}, {@link dev.infersim.bench.report.BenchResult}), shards merged,
 * a sweep's summary and knee, two runs compared, and the HTML report. It sits above {@code run}, {@code measure} and
 * {@code config}, and none of them uses it.
 */
package dev.infersim.bench.report;
