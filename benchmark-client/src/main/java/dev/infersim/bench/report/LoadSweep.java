package dev.infersim.bench.report;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.result.FlatRecordReader;
import dev.infersim.result.MetricSummary;
import dev.infersim.result.PercentileInterval;
import dev.infersim.result.RunTotals;
import dev.infersim.result.ServingResult;
import org.apache.commons.math3.distribution.BetaDistribution;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

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

    /**
     * One load point: the offered load, its run's figures, the measured window's length (s), why nothing could be
     * measured (null when something was), and its percentiles' 95% intervals (null where it measured nothing).
     */
    public record Point(double load, Figures figures, Double duration, String error, Intervals intervals) {

        /** A measured run's point. */
        public static Point of(double load, ServingResult<ClientKeys> r) {
            MetricSummary ttft = r.metric("ttft");
            MetricSummary tpot = r.metric("tpot");
            MetricSummary e2el = r.metric("e2el");
            ClientKeys keys = r.producer();
            RunTotals totals = r.totals();
            return new Point(load, new Figures(totals.requestThroughput(), keys.steadyRequestThroughput(),
                    keys.steadySendRate(), totals.requestGoodput(), totals.outputThroughput(), median(ttft), p99(ttft),
                    median(tpot), p99(tpot), median(e2el), p99(e2el), totals.completed(), totals.failed(),
                    keys.valid()), totals.duration(), keys.error(), new Intervals(r.interval("median_ttft_ms"),
                    r.interval("p99_ttft_ms"), r.interval("median_tpot_ms"), r.interval("p99_e2el_ms")));
        }

        /** A load point whose initial test request failed: nothing measured, nothing sent, invalid. */
        public static Point unmeasured(double load, String error) {
            return new Point(load, new Figures(null, null, null, null, null, null, null, null, null, null, null, 0L,
                    0L, false), null, error, null);
        }

        private static Double median(MetricSummary m) {
            return m == null ? null : m.medianMs();
        }

        private static Double p99(MetricSummary m) {
            double p99 = m == null ? Double.NaN : m.percentileMs(99);
            return Double.isNaN(p99) ? null : p99;
        }
    }

    /**
     * What the sweep reads of a load point's run, each null where the run has none: vLLM's throughputs, TTFT, TPOT and
     * E2EL at the median and p99 and counts, the client's throughput and send rate while sending, and its validity.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Figures(Double requestThroughput,
                          @JsonProperty("infersim_steady_request_throughput") Double steadyRequestThroughput,
                          @JsonProperty("infersim_steady_send_rate") Double steadySendRate, Double requestGoodput,
                          Double outputThroughput, Double medianTtftMs, Double p99TtftMs, Double medianTpotMs,
                          Double p99TpotMs, Double medianE2elMs, Double p99E2elMs, Long completed, Long failed,
                          @JsonProperty("infersim_valid") Boolean valid) {
    }

    /** A point's percentile intervals, as its row lists them (each null where the run has none). */
    public record Intervals(@JsonProperty("median_ttft_ms_ci95") PercentileInterval medianTtftMs,
                            @JsonProperty("p99_ttft_ms_ci95") PercentileInterval p99TtftMs,
                            @JsonProperty("median_tpot_ms_ci95") PercentileInterval medianTpotMs,
                            @JsonProperty("p99_e2el_ms_ci95") PercentileInterval p99E2elMs) {
    }

    /**
     * A point of the sweep's result: the load, its figures, its SLO attainment and that attainment's 95% interval
     * (null without a goodput SLO), then its percentiles' intervals when it measured any.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonDeserialize(using = FlatRecordReader.class)
    public record Row(double load, @JsonUnwrapped Figures figures, Double sloAttainment, List<Double> sloAttainmentCi95,
                      @JsonUnwrapped Intervals intervals) {
    }

    /**
     * The sweep's conclusions: what it varied, its points, the saturation knee with its reason and interval, the
     * attainment threshold, the highest load meeting the SLO with its interval, and the loads whose runs were invalid.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Summary(String mode, List<Row> points, Double kneeLoad, String kneeReason,
                          List<Double> kneeLoadInterval, double sloAttainmentThreshold, Double maxLoadMeetingSlo,
                          List<Double> maxLoadMeetingSloInterval, List<Double> invalidLoads) {
    }

    private LoadSweep() {
    }

    /** The sweep summary: mode, per-point key figures, the knee, and the highest load meeting the SLO. */
    public static Summary analyze(Mode mode, List<Point> points, double attainmentThreshold) {
        if (points.isEmpty()) {
            throw new IllegalArgumentException("a sweep needs at least one load point");
        }
        List<Row> rows = new ArrayList<>();
        Double knee = null;
        String kneeReason = "no saturation up to the highest load";
        Double bestSlo = null;
        List<Double> kneeInterval = null;
        Double sureSlo = null;
        Double possibleSlo = null;
        List<Double> invalidLoads = new ArrayList<>();
        double baseTtft = number(points.get(0).figures().medianTtftMs());
        for (int i = 0; i < points.size(); i++) {
            Point p = points.get(i);
            Figures r = p.figures();
            double attainment = attainment(p);
            double[] attainmentCi = attainmentInterval(p);
            rows.add(new Row(p.load(), r, Double.isNaN(attainment) ? null : attainment,
                    attainmentCi == null ? null : Arrays.asList(attainmentCi[0], attainmentCi[1]), p.intervals()));
            if (knee == null) {
                String reason = saturation(mode, points, i, baseTtft);
                if (reason != null) {
                    knee = p.load();
                    kneeReason = reason;
                    kneeInterval = Arrays.asList(i == 0 ? null : points.get(i - 1).load(), p.load());
                }
            }
            boolean valid = !Boolean.FALSE.equals(r.valid());
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
        return new Summary(mode.key(), rows, knee, kneeReason, kneeInterval, attainmentThreshold, bestSlo,
                possibleSlo == null ? null : Arrays.asList(sureSlo, possibleSlo), invalidLoads);
    }

    private static String saturation(Mode mode, List<Point> points, int i, double baseTtft) {
        Figures r = points.get(i).figures();
        if (points.get(i).error() != null) {
            return "nothing could be measured at this load: " + points.get(i).error();
        }
        double load = points.get(i).load();
        double ttft = number(r.medianTtftMs());
        if (i > 0 && baseTtft > 0 && ttft > TTFT_GROWTH * baseTtft) {
            return String.format(Locale.ROOT, "median TTFT %.1f ms is over %.0fx the lightest load's %.1f ms", ttft,
                    TTFT_GROWTH, baseTtft);
        }
        double sending = sendingThroughput(r);
        double offered = number(r.steadySendRate());
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
            double prevThroughput = sendingThroughput(points.get(i - 1).figures());
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
    private static double sendingThroughput(Figures r) {
        double steady = number(r.steadyRequestThroughput());
        return Double.isNaN(steady) ? number(r.requestThroughput()) : steady;
    }

    /** Good requests over all that ended; NaN when no goodput SLO was set or nothing ended. */
    static double attainment(Point p) {
        Figures r = p.figures();
        Double goodput = r.requestGoodput();
        double ended = number(r.completed()) + number(r.failed());
        if (goodput == null || ended == 0) {
            return Double.NaN;
        }
        return Math.min(1, goodput * number(p.duration()) / ended);
    }

    private static Double max(Double a, double b) {
        return a == null ? b : Math.max(a, b);
    }

    /**
     * The 95% Clopper-Pearson interval of a point's attainment: good requests out of all that ended, as independent
     * trials; null without a goodput SLO or a request.
     */
    static double[] attainmentInterval(Point p) {
        Figures r = p.figures();
        Double goodput = r.requestGoodput();
        long ended = Math.round(number(r.completed()) + number(r.failed()));
        if (goodput == null || ended <= 0) {
            return null;
        }
        long good = Math.min(ended, Math.round(goodput * number(p.duration())));
        double low = good == 0 ? 0 : new BetaDistribution(null, good, ended - good + 1).inverseCumulativeProbability(0.025);
        double high = good == ended ? 1
                : new BetaDistribution(null, good + 1, ended - good).inverseCumulativeProbability(0.975);
        return new double[] {low, high};
    }

    private static double number(Number v) {
        return v == null ? Double.NaN : v.doubleValue();
    }
}
