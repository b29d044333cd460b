package dev.infersim.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.result.MetricSummaries;
import dev.infersim.result.MetricSummary;
import dev.infersim.result.RequestLogReader;
import dev.infersim.result.RequestRecord;
import dev.infersim.result.ResultJson;
import dev.infersim.result.RunTotals;
import dev.infersim.result.ServingResult;
import org.apache.commons.math3.stat.inference.MannWhitneyUTest;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Two benchmark results side by side: each summary metric of A and B with the absolute and relative delta, and for
 * TTFT, TPOT and E2EL a two-sided Mann-Whitney U test (Commons Math, normal approximation) on the per-request values
 * of the detailed JSONL files, which says whether B's distribution differs from A's beyond chance at level alpha.
 * A rank test needs no normality, which latency distributions never have.
 */
public final class RunComparison {
    static final List<String> TESTED = List.of("ttft_ms", "tpot_ms", "e2el_ms");

    /** One metric of both runs. */
    public record Row(String metric, Double a, Double b) {
        public Double delta() {
            return a == null || b == null ? null : b - a;
        }

        public Double relativeDelta() {
            return a == null || b == null || a == 0 ? null : (b - a) / a;
        }
    }

    /** The rank test of one per-request metric. */
    public record Test(String metric, int samplesA, int samplesB, double medianA, double medianB, double pValue,
                       boolean significant) {
    }

    private RunComparison() {
    }

    /**
     * What a comparison reads of a result file (bench, simulate, predict, merge, or vLLM's own): vLLM's run totals and
     * latency keys, the per-request file it names ({@code infersim_detailed_file}, null where none), and whether it is
     * the combined result of {@code infersim sweep} (which holds many runs rather than one).
     */
    public record Compared(RunTotals totals, MetricSummaries latencies, String detailedFile, boolean sweep) {

        /**
         * Reads a result file, without vLLM's per-request arrays ({@link ResultJson#readObject}); throws
         * {@link UncheckedIOException} with one line naming the file and what is wrong.
         */
        public static Compared read(Path file) {
            ObjectNode flat = ResultJson.readObject(file);
            try {
                JsonNode detail = flat.path(ServingResult.INFERSIM + "detailed_file");
                return new Compared(ResultJson.part(flat, RunTotals.class),
                        MetricSummaries.read(flat, "", MetricSummaries.VLLM_METRICS),
                        detail.isTextual() ? detail.asText() : null, flat.has(ServingResult.INFERSIM + "sweep"));
            } catch (UncheckedIOException e) {
                throw new UncheckedIOException(file + ": " + e.getMessage(), e.getCause());
            }
        }

        /** True when the result holds at least one summary metric, as every benchmark, simulate or predict result does. */
        public boolean hasSummary() {
            return summary(this, this).values().stream().anyMatch(v -> v != null);
        }
    }

    /** The summary metrics present in either result. */
    public static List<Row> rows(Compared a, Compared b) {
        Map<String, Double> va = summary(a, b);
        Map<String, Double> vb = summary(b, a);
        List<Row> rows = new ArrayList<>();
        for (String key : va.keySet()) {
            if (va.get(key) != null || vb.get(key) != null) {
                rows.add(new Row(key, va.get(key), vb.get(key)));
            }
        }
        return rows;
    }

    /**
     * Of {@code r}: the run totals, then per latency metric its mean, median and every percentile it or {@code other}
     * reports (vLLM writes p{percentile}_{metric}_ms for whatever --metric-percentiles the run was given), in that
     * order; null where {@code r} has none (NaN included).
     */
    private static Map<String, Double> summary(Compared r, Compared other) {
        RunTotals t = r.totals();
        Map<String, Double> values = new LinkedHashMap<>();
        values.put("completed", number(t.completed()));
        values.put("failed", number(t.failed()));
        values.put("duration", number(t.duration()));
        values.put("request_throughput", number(t.requestThroughput()));
        values.put("request_goodput", number(t.requestGoodput()));
        values.put("output_throughput", number(t.outputThroughput()));
        values.put("total_token_throughput", number(t.totalTokenThroughput()));
        for (String metric : MetricSummaries.VLLM_METRICS) {
            MetricSummary m = r.latencies().metric(metric);
            values.put(MetricSummary.key("mean", metric), m == null ? null : number(m.meanMs()));
            values.put(MetricSummary.key("median", metric), m == null ? null : number(m.medianMs()));
            for (Compared listing : List.of(r, other)) {
                MetricSummary listed = listing.latencies().metric(metric);
                for (MetricSummary.Percentile p : listed == null ? List.<MetricSummary.Percentile>of() : listed.percentiles()) {
                    values.putIfAbsent(MetricSummary.percentileKey(p.percentile(), metric),
                            m == null ? null : number(m.percentileMs(p.percentile())));
                }
            }
        }
        return values;
    }

    private static Double number(Number v) {
        return v == null || Double.isNaN(v.doubleValue()) ? null : v.doubleValue();
    }

    /** Mann-Whitney U tests on TTFT, TPOT and E2EL of the successful requests of two detailed files. */
    public static List<Test> tests(Path detailedA, Path detailedB, double alpha) {
        Map<String, double[]> a = perRequest(detailedA);
        Map<String, double[]> b = perRequest(detailedB);
        MannWhitneyUTest test = new MannWhitneyUTest();
        List<Test> out = new ArrayList<>();
        for (String metric : TESTED) {
            double[] x = a.get(metric);
            double[] y = b.get(metric);
            if (x.length < 2 || y.length < 2) {
                continue;
            }
            double p = test.mannWhitneyUTest(x, y);
            out.add(new Test(metric, x.length, y.length, median(x), median(y), p, p < alpha));
        }
        return out;
    }

    /** Per-request TTFT, TPOT and E2EL in ms of the measured successful requests in a detailed JSONL file. */
    static Map<String, double[]> perRequest(Path detailed) {
        List<RequestRecord> measured = new ArrayList<>();
        new RequestLogReader(detailed).forEach(false, row -> {
            if (!row.warmup() && row.record().succeeded()) {
                measured.add(row.record());
            }
        });
        Map<String, double[]> out = new LinkedHashMap<>();
        out.put("ttft_ms", measured.stream().mapToDouble(r -> r.ttftNanos() / 1e6).toArray());
        out.put("tpot_ms", measured.stream().filter(r -> r.outputTokens() > 1).mapToDouble(r -> r.tpotNanos() / 1e6)
                .toArray());
        out.put("e2el_ms", measured.stream().mapToDouble(r -> r.e2elNanos() / 1e6).toArray());
        return out;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
