package dev.infersim.bench;

import org.apache.commons.math3.distribution.BetaDistribution;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Analysis of a sweep over offered load (request rates for open loops, concurrencies for closed loops): where the
 * server saturates, and the highest load that still meets the goodput SLO.
 *
 * <p>Saturation knee: the first point where throughput stops following the load or latency takes off. Throughput is
 * taken while requests were still being sent ({@code infersim_steady_request_throughput}; {@code request_throughput}
 * for results without it), which leaves out the wait for the first responses and the drain after the last send:
 * <ul>
 *   <li>rates: first tokens over the sending span shifted by the median TTFT fall below {@value #RATE_EFFICIENCY} of
 *   the rate actually offered over the same span ({@code infersim_steady_send_rate}: a short Poisson schedule misses
 *   its nominal rate by several percent; the nominal rate for results without it);</li>
 *   <li>concurrencies: throughput by Little's law (users in flight while sending over the mean E2EL) grows by less
 *   than {@value #MARGINAL_GAIN} of the (f - 1) a linear system would when concurrency grows by a factor f (flat
 *   throughput means latency is absorbing the extra users);</li>
 *   <li>both: median TTFT above {@value #TTFT_GROWTH} times that of the lightest point;</li>
 *   <li>both: a point that measured nothing ({@code infersim_error}: its initial test request failed).</li>
 * </ul>
 * This is the "find the knee" rule of the methodology seeds: report throughput at the latency budget, not past it.
 *
 * <p>SLO attainment of a point: requests meeting every {@code --goodput} objective over all requests that ended
 * (failures count against it). A load meets the SLO when its run is valid and attainment is at least the threshold
 * (0.9 by default, the attainment target used by DistServe, Zhong et al., OSDI 2024).
 *
 * <p>Uncertainty: each point carries its TTFT percentiles' 95% intervals (from the run's result) and its attainment's
 * 95% Clopper-Pearson interval (requests taken as independent trials). The knee lies between the last load that kept
 * up and the knee load ({@code knee_load_interval}); the highest load meeting the SLO lies between the highest valid
 * load whose attainment interval lies above the threshold and the highest whose interval reaches it
 * ({@code max_load_meeting_slo_interval}): a sweep can say no more than its loads.
 */
public final class LoadSweep {
    static final double RATE_EFFICIENCY = 0.9;
    static final double MARGINAL_GAIN = 0.5;
    static final double TTFT_GROWTH = 3.0;

    /** What the sweep varies. */
    public enum Mode {
        REQUEST_RATE("request_rate"), MAX_CONCURRENCY("max_concurrency");

        private final String key;

        Mode(String key) {
            this.key = key;
        }

        public String key() {
            return key;
        }
    }

    /** One measured load point: the offered load and the run's result fields. */
    public record Point(double load, Map<String, Object> result) {
    }

    private LoadSweep() {
    }

    /** The sweep summary: mode, per-point key figures, the knee, and the highest load meeting the SLO. */
    public static Map<String, Object> analyze(Mode mode, List<Point> points, double attainmentThreshold) {
        if (points.isEmpty()) {
            throw new IllegalArgumentException("a sweep needs at least one load point");
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        Double knee = null;
        String kneeReason = "no saturation up to the highest load";
        Double bestSlo = null;
        List<Double> kneeInterval = null;
        Double sureSlo = null;
        Double possibleSlo = null;
        List<Double> invalidLoads = new ArrayList<>();
        double baseTtft = number(points.get(0).result(), "median_ttft_ms");
        for (int i = 0; i < points.size(); i++) {
            Point p = points.get(i);
            Map<String, Object> r = p.result();
            double attainment = attainment(r);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("load", p.load());
            for (String k : List.of("request_throughput", "infersim_steady_request_throughput", "infersim_steady_send_rate",
                    "request_goodput", "output_throughput", "median_ttft_ms", "p99_ttft_ms", "median_tpot_ms",
                    "p99_tpot_ms", "median_e2el_ms", "p99_e2el_ms", "completed", "failed", "infersim_valid")) {
                row.put(k, r.get(k));
            }
            row.put("slo_attainment", Double.isNaN(attainment) ? null : attainment);
            double[] attainmentCi = attainmentInterval(r);
            row.put("slo_attainment_ci95", attainmentCi == null ? null : Arrays.asList(attainmentCi[0], attainmentCi[1]));
            if (r.get("infersim_percentile_ci95_ms") instanceof Map<?, ?> ci) {
                for (String k : List.of("median_ttft_ms", "p99_ttft_ms", "median_tpot_ms", "p99_e2el_ms")) {
                    row.put(k + "_ci95", ci.get(k));
                }
            }
            rows.add(row);
            if (knee == null) {
                String reason = saturation(mode, points, i, baseTtft);
                if (reason != null) {
                    knee = p.load();
                    kneeReason = reason;
                    kneeInterval = Arrays.asList(i == 0 ? null : points.get(i - 1).load(), p.load());
                }
            }
            boolean valid = !Boolean.FALSE.equals(r.get("infersim_valid"));
            if (!valid) {
                invalidLoads.add(p.load());
            }
            // an invalid run's latencies are not to be trusted, so its attainment cannot vouch for its load
            if (valid && !Double.isNaN(attainment) && attainment >= attainmentThreshold) {
                bestSlo = bestSlo == null ? p.load() : Math.max(bestSlo, p.load());
            }
            if (valid && attainmentCi != null) {
                sureSlo = attainmentCi[0] >= attainmentThreshold ? max(sureSlo, p.load()) : sureSlo;
                possibleSlo = attainmentCi[1] >= attainmentThreshold ? max(possibleSlo, p.load()) : possibleSlo;
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", mode.key());
        out.put("points", rows);
        out.put("knee_load", knee);
        out.put("knee_reason", kneeReason);
        out.put("knee_load_interval", kneeInterval);
        out.put("slo_attainment_threshold", attainmentThreshold);
        out.put("max_load_meeting_slo", bestSlo);
        out.put("max_load_meeting_slo_interval", possibleSlo == null ? null : Arrays.asList(sureSlo, possibleSlo));
        out.put("invalid_loads", invalidLoads);
        return out;
    }

    private static String saturation(Mode mode, List<Point> points, int i, double baseTtft) {
        Map<String, Object> r = points.get(i).result();
        if (r.get("infersim_error") != null) {
            return "nothing could be measured at this load: " + r.get("infersim_error");
        }
        double load = points.get(i).load();
        double ttft = number(r, "median_ttft_ms");
        if (i > 0 && baseTtft > 0 && ttft > TTFT_GROWTH * baseTtft) {
            return String.format(Locale.ROOT, "median TTFT %.1f ms is over %.0fx the lightest load's %.1f ms", ttft,
                    TTFT_GROWTH, baseTtft);
        }
        double sending = sendingThroughput(r);
        double offered = number(r, "infersim_steady_send_rate");
        if (Double.isNaN(offered)) {
            offered = load;
        }
        if (mode == Mode.REQUEST_RATE && Double.isFinite(offered) && sending < RATE_EFFICIENCY * offered) {
            return String.format(Locale.ROOT, "achieved %.2f req/s is below %.0f%% of the offered %.2f req/s", sending,
                    RATE_EFFICIENCY * 100, offered);
        }
        if (mode == Mode.MAX_CONCURRENCY && i > 0) {
            double throughput = sendingThroughput(r);
            double prevLoad = points.get(i - 1).load();
            double prevThroughput = sendingThroughput(points.get(i - 1).result());
            double linearGain = load / prevLoad - 1;
            double gain = prevThroughput > 0 ? throughput / prevThroughput - 1 : 0;
            if (linearGain > 0 && gain < MARGINAL_GAIN * linearGain) {
                return String.format(Locale.ROOT, "raising concurrency %.0f -> %.0f gained %.0f%% throughput, "
                        + "under half the %.0f%% of linear scaling", prevLoad, load, gain * 100, linearGain * 100);
            }
        }
        return null;
    }

    /** Request throughput while requests were still being sent when the result has it, else over the whole run. */
    private static double sendingThroughput(Map<String, Object> r) {
        double steady = number(r, "infersim_steady_request_throughput");
        return Double.isNaN(steady) ? number(r, "request_throughput") : steady;
    }

    /** Good requests over all that ended; NaN when no goodput SLO was set or nothing ended. */
    static double attainment(Map<String, Object> r) {
        Object goodput = r.get("request_goodput");
        double ended = number(r, "completed") + number(r, "failed");
        if (!(goodput instanceof Number g) || ended == 0) {
            return Double.NaN;
        }
        return Math.min(1, g.doubleValue() * number(r, "duration") / ended);
    }

    private static Double max(Double a, double b) {
        return a == null ? b : Math.max(a, b);
    }

    /**
     * The 95% Clopper-Pearson interval of a point's attainment: good requests out of all that ended, as independent
     * trials; null without a goodput SLO or a request.
     */
    static double[] attainmentInterval(Map<String, Object> r) {
        Object goodput = r.get("request_goodput");
        long ended = Math.round(number(r, "completed") + number(r, "failed"));
        if (!(goodput instanceof Number g) || ended <= 0) {
            return null;
        }
        long good = Math.min(ended, Math.round(g.doubleValue() * number(r, "duration")));
        double low = good == 0 ? 0 : new BetaDistribution(null, good, ended - good + 1).inverseCumulativeProbability(0.025);
        double high = good == ended ? 1
                : new BetaDistribution(null, good + 1, ended - good).inverseCumulativeProbability(0.975);
        return new double[] {low, high};
    }

    private static double number(Map<String, Object> r, String key) {
        Object v = r.get(key);
        return v instanceof Number n ? n.doubleValue() : Double.NaN;
    }
}
