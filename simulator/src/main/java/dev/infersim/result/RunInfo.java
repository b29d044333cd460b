package dev.infersim.result;

import dev.infersim.common.ConfigException;
import dev.infersim.workload.arrival.RampUp;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The run parameters a result reports, named as in {@code vllm bench serve --save-result}.
 *
 * @param date              run date as vLLM writes it ({@code yyyyMMdd-HHmmss}); supplied by the caller, so the
 *                          simulator never reads the clock
 * @param backend           what served the requests (vLLM's {@code --backend}; {@code infersim} for the simulator)
 * @param modelId           the served model
 * @param tokenizerId       the tokenizer that counted tokens
 * @param numPrompts        requests in the run, warmups excluded
 * @param requestRatePerS   {@code --request-rate}; infinite for all-at-once and closed loops
 * @param burstiness        {@code --burstiness}
 * @param maxConcurrency    {@code --max-concurrency}; 0 for none
 * @param percentileMetrics {@code --percentile-metrics}: which of ttft, tpot, itl, e2el get percentiles
 * @param metricPercentiles {@code --metric-percentiles}, each in (0, 100]
 * @param rampUp            {@code --ramp-up-strategy} and its rates, or null without a ramp
 */
public record RunInfo(String date, String backend, String modelId, String tokenizerId, long numPrompts,
                      double requestRatePerS, double burstiness, int maxConcurrency, List<String> percentileMetrics,
                      List<Double> metricPercentiles, RampUp rampUp) {

    private static final Set<String> METRICS = Set.of("ttft", "tpot", "itl", "e2el");

    public RunInfo {
        percentileMetrics = List.copyOf(percentileMetrics);
        metricPercentiles = List.copyOf(metricPercentiles);
        for (String m : percentileMetrics) {
            if (!METRICS.contains(m)) {
                throw new ConfigException(
                        "--percentile-metrics: unknown metric '" + m + "'; use ttft, tpot, itl, e2el");
            }
        }
        for (double p : metricPercentiles) {
            if (!(p > 0 && p <= 100)) {
                throw new ConfigException("--metric-percentiles: " + p + " is not in (0, 100]");
            }
        }
    }

    /** A run without a ramp. */
    public RunInfo(String date, String backend, String modelId, String tokenizerId, long numPrompts,
                   double requestRatePerS, double burstiness, int maxConcurrency, List<String> percentileMetrics,
                   List<Double> metricPercentiles) {
        this(date, backend, modelId, tokenizerId, numPrompts, requestRatePerS, burstiness, maxConcurrency,
                percentileMetrics, metricPercentiles, null);
    }

    /** vLLM's spelling of a percentile in key names: 99 -> "99", 99.9 -> "99.9". */
    public static String percentileWord(double p) {
        return p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p);
    }

    /**
     * vLLM's default result file name: {@code backend-{rate}qps[-concurrency{N}]-{model}-{date}.json}, the rate
     * written as Python prints a float (10.0, inf); with a ramp, {@code backend-ramp-up-{strategy}-{start}qps-{end}qps}
     * in place of the rate, the ramp rates printed as the integers vLLM parses them to where they are whole.
     */
    public String defaultResultFileName() {
        String rate = Double.isInfinite(requestRatePerS) ? "inf" : Double.toString(requestRatePerS);
        String load = rampUp == null ? rate + "qps" : "ramp-up-" + rampUp.strategy().name().toLowerCase(Locale.ROOT) + "-"
                + percentileWord(rampUp.startRps()) + "qps-" + percentileWord(rampUp.endRps()) + "qps";
        String concurrency = maxConcurrency > 0 ? "-concurrency" + maxConcurrency : "";
        String model = modelId.substring(modelId.lastIndexOf('/') + 1);
        return backend + "-" + load + concurrency + "-" + model + "-" + date + ".json";
    }
}
