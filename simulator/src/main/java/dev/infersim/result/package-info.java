/**
 * The one result schema of simulate, bench, predict, merge and every report: vLLM's {@code --save-result} keys as
 * records that {@link dev.infersim.result.ResultJson} writes and reads back ({@link dev.infersim.result.ServingResult}
 * of a run, its producer's {@code infersim_} keys typed by the producer; {@link dev.infersim.result.RunHeader},
 * {@link dev.infersim.result.RunTotals}, {@link dev.infersim.result.MetricSummaries}; {@link dev.infersim.result.PredictionResult}
 * of a closed-form prediction), what a producer knows of its run
 * ({@link dev.infersim.result.RunInfo}), the statistics behind them
 * ({@link dev.infersim.result.ServingStats}, {@link dev.infersim.result.LatencyStats}, latency and SLO attainment over
 * time in {@link dev.infersim.result.LatencySeries}), and one typed per-request
 * record ({@link dev.infersim.result.RequestRecord}, with {@link dev.infersim.result.ClientObservation} for what only a
 * client sees) with one JSONL writer and reader ({@link dev.infersim.result.RequestLogWriter},
 * {@link dev.infersim.result.RequestLogReader}) and vLLM's per-request arrays built from it
 * ({@link dev.infersim.result.VllmDetailArrays}). It knows nothing of the engine, so a client writes it from measured
 * numbers exactly as the simulator does from virtual ones.
 */
package dev.infersim.result;
