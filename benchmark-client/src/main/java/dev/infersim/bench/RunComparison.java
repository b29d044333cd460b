package dev.infersim.bench;

import dev.infersim.result.RequestLogReader;
import dev.infersim.result.RequestRecord;
import dev.infersim.result.VllmDetailArrays;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.JsonSyntax;
import org.apache.commons.math3.stat.inference.MannWhitneyUTest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Two benchmark results side by side: each summary metric of A and B with the absolute and relative delta, and for
 * TTFT, TPOT and E2EL a two-sided Mann-Whitney U test (Commons Math, normal approximation) on the per-request values
 * of the detailed JSONL files, which says whether B's distribution differs from A's beyond chance at level alpha.
 * A rank test needs no normality, which latency distributions never have.
 */
public final class RunComparison {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final List<String> RUN_KEYS = List.of("completed", "failed", "duration", "request_throughput",
            "request_goodput", "output_throughput", "total_token_throughput");
    static final List<String> LATENCIES = List.of("ttft", "tpot", "itl", "e2el");
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

    /** Key of a sweep result's per-point results, each with its own per-request arrays; left out when reading. */
    private static final String SWEEP_RUNS = "runs";

    /**
     * Reads a result JSON file, leaving out vLLM's per-request arrays (and a sweep's per-point results, which carry
     * them too): they can hold millions of entries, and the comparison reads per-request values from the detail files
     * instead.
     */
    public static JsonNode readResult(Path file) {
        try (JsonParser p = JSON.createParser(file.toFile())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new UncheckedIOException(file + ": not a result JSON (not a JSON object)",
                        new IOException("not a JSON object"));
            }
            ObjectNode result = JSON.createObjectNode();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                p.nextToken();
                if (VllmDetailArrays.KEYS.contains(key) || key.equals(SWEEP_RUNS)) {
                    p.skipChildren();
                } else {
                    result.set(key, JSON.readTree(p));
                }
            }
            return result;
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(file + JsonSyntax.location(e) + ": malformed JSON: " + JsonSyntax.reason(e), e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read result " + file + ": " + e.getMessage(), e);
        }
    }

    /** True for the combined result of {@code infersim sweep}, which holds many runs rather than one. */
    public static boolean isSweep(JsonNode result) {
        return result.has("infersim_sweep");
    }

    /** True when the JSON object holds at least one summary metric, as every benchmark, simulate or predict result does. */
    public static boolean hasSummary(JsonNode result) {
        return summaryKeys(result, result).stream().anyMatch(key -> value(result, key) != null);
    }

    /** The summary metrics present in either result. */
    public static List<Row> rows(JsonNode a, JsonNode b) {
        List<Row> rows = new ArrayList<>();
        for (String key : summaryKeys(a, b)) {
            Double va = value(a, key);
            Double vb = value(b, key);
            if (va != null || vb != null) {
                rows.add(new Row(key, va, vb));
            }
        }
        return rows;
    }

    /**
     * The run totals, then per latency metric its mean, median and every percentile either result reports: vLLM writes
     * p{percentile}_{metric}_ms for whatever --metric-percentiles the run was given.
     */
    private static List<String> summaryKeys(JsonNode a, JsonNode b) {
        List<String> keys = new ArrayList<>(RUN_KEYS);
        for (String metric : LATENCIES) {
            keys.add("mean_" + metric + "_ms");
            keys.add("median_" + metric + "_ms");
            Pattern percentile = Pattern.compile("p[0-9.]+_" + metric + "_ms");
            for (JsonNode result : List.of(a, b)) {
                result.fieldNames().forEachRemaining(key -> {
                    if (percentile.matcher(key).matches() && !keys.contains(key)) {
                        keys.add(key);
                    }
                });
            }
        }
        return keys;
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

    private static Double value(JsonNode node, String key) {
        JsonNode v = node.get(key);
        return v != null && v.isNumber() ? v.asDouble() : null;
    }
}
