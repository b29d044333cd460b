/**
 * The benchmark client behind {@code infersim bench}, {@code sweep} and {@code compare}: a load generator for any
 * OpenAI-compatible streaming endpoint. Open loop from an absolute arrival schedule (latencies from the scheduled send
 * time, send lag reported, runs over the lag limit flagged invalid) or a closed loop of N in flight; SSE parsed on one
 * Vert.x event loop; metrics as defined in the project's metrics reference (per-token ITL, chunk ICL, vLLM's TPOT and
 * E2EL) written in the shared result schema of {@code dev.infersim.result}; ground-truth checks against the infersim
 * mock; Prometheus scraping; sweeps with knee detection; Mann-Whitney comparisons; HTML reports with ECharts.
 * It depends on the simulator only for the shared workload and result types, never on the mock server.
 *
 * <p>This package holds the entry point, {@link dev.infersim.bench.BenchmarkClient}, which wires the sub-packages
 * together; they form a line with no cycle: {@code config} (plain settings) below {@code measure} (windows, validity,
 * the result keys), below {@code run} (pacing, lanes, streamed exchanges), below {@code report} (result assembly,
 * merge, sweep summary, comparison, HTML); {@code harness} (check-harness) uses {@code measure} only.
 */
package dev.infersim.bench;
