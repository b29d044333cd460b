package dev.infersim.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.engine.ConfigException;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Another harness's per-request results, read from its own output file into one shape ({@link Measured}, ms), so that
 * {@link HarnessCheck} can hold them against the server's truth. Fields read per format:
 * <ul>
 *   <li>{@code vllm}: the {@code vllm bench serve --save-result --save-detailed} JSON: {@code ttfts}, {@code itls}
 *       (seconds), {@code input_lens}, {@code output_lens}, {@code errors}, and {@code request_rate}; E2EL is
 *       TTFT + the sum of the request's ITLs and TPOT (E2EL - TTFT) / (output_len - 1), as vLLM derives them.</li>
 *   <li>{@code aiperf}: {@code profile_export.jsonl}: {@code metadata.x_request_id}, {@code metadata.request_start_ns},
 *       {@code metadata.benchmark_phase} (only {@code profiling} rows), {@code error}, and the metrics
 *       {@code time_to_first_token}, {@code request_latency}, {@code inter_token_latency} (its per-request TPOT),
 *       {@code inter_chunk_latency} (a list), {@code input_sequence_length}, {@code output_sequence_length} (ms and
 *       tokens, each {@code {"value", "unit"}}).</li>
 *   <li>{@code guidellm}: the benchmarks report JSON: every {@code benchmarks[].requests.successful[]} entry's
 *       {@code request_id}, {@code request_start_time} (epoch s), {@code request_latency} (s),
 *       {@code time_to_first_token_ms}, {@code inter_token_latency_ms} (its TPOT: last minus first token over
 *       output_tokens - 1), {@code prompt_tokens}, {@code output_tokens}; {@code errored} and {@code incomplete}
 *       entries are counted as failed. GuideLLM keeps no per-gap list, so there is no ITL comparison.</li>
 * </ul>
 */
public final class HarnessResults {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The harness formats {@code check-harness} reads. */
    public enum Format {
        VLLM("a vllm bench serve result"), AIPERF("an AIPerf profile_export.jsonl"), GUIDELLM("a GuideLLM benchmarks report");

        private final String description;

        Format(String description) {
            this.description = description;
        }

        public static Format parse(String s) {
            try {
                return valueOf(s.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new ConfigException("--format must be vllm, aiperf or guidellm, got '" + s + "'");
            }
        }
    }

    /**
     * One successful request as the harness measured it, in ms. {@code requestId} is null and {@code startMs} NaN
     * where the format has none; {@code itlsMs} is null where the format keeps no per-gap list; token counts are -1
     * where absent.
     */
    public record Measured(String requestId, double startMs, double ttftMs, double e2elMs, double tpotMs,
                           double[] itlsMs, int promptTokens, int outputTokens) {
    }

    /** What a result file holds: its successful requests in the harness's order, the failed count, the target rate. */
    public record Results(List<Measured> requests, int failed, double requestRate) {
    }

    private HarnessResults() {
    }

    public static Results read(Format format, Path file) {
        try {
            return switch (format) {
                case VLLM -> vllm(JSON.readTree(file.toFile()), file);
                case AIPERF -> aiperf(file);
                case GUIDELLM -> guidellm(JSON.readTree(file.toFile()), file);
            };
        } catch (JsonProcessingException e) {
            throw new ConfigException(file + ": not " + format.description + " (invalid JSON at line "
                    + e.getLocation().getLineNr() + ": " + e.getOriginalMessage() + ")");
        } catch (IOException e) {
            throw new ConfigException(file + ": cannot read (" + e.getMessage() + ")");
        }
    }

    private static Results vllm(JsonNode root, Path file) {
        JsonNode ttfts = root.path("ttfts");
        JsonNode itls = root.path("itls");
        JsonNode in = root.path("input_lens");
        JsonNode out = root.path("output_lens");
        if (!ttfts.isArray() || !itls.isArray() || !out.isArray() || ttfts.size() != itls.size() || ttfts.size() != out.size()) {
            throw new ConfigException(file + ": not a vllm bench serve --save-detailed result (arrays ttfts, itls and "
                    + "output_lens of one length expected)");
        }
        JsonNode errors = root.path("errors");
        List<Measured> requests = new ArrayList<>();
        int failed = 0;
        for (int i = 0; i < ttfts.size(); i++) {
            if (!errors.path(i).asText("").isEmpty() || out.get(i).asInt() == 0) {
                failed++;
                continue;
            }
            double ttft = ttfts.get(i).asDouble() * 1e3;
            double[] gaps = new double[itls.get(i).size()];
            double sum = 0;
            for (int j = 0; j < gaps.length; j++) {
                gaps[j] = itls.get(i).get(j).asDouble() * 1e3;
                sum += gaps[j];
            }
            int outputLen = out.get(i).asInt();
            double e2el = ttft + sum;
            double tpot = outputLen > 1 ? (e2el - ttft) / (outputLen - 1) : Double.NaN;
            requests.add(new Measured(null, Double.NaN, ttft, e2el, tpot, gaps, in.path(i).asInt(-1), outputLen));
        }
        JsonNode rate = root.path("request_rate");
        return new Results(requests, failed, rate.isNumber() ? rate.asDouble() : Double.NaN);
    }

    private static Results aiperf(Path file) throws IOException {
        List<Measured> requests = new ArrayList<>();
        int failed = 0;
        try (BufferedReader lines = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int lineNo = 0;
            while ((line = lines.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode r;
                try {
                    r = JSON.readTree(line);
                } catch (JsonProcessingException e) {
                    throw new ConfigException(file + ": not " + Format.AIPERF.description + " (invalid JSON at line " + lineNo
                            + ": " + e.getOriginalMessage() + ")");
                }
                JsonNode meta = r.path("metadata");
                JsonNode m = r.path("metrics");
                if (!meta.isObject()) {
                    throw new ConfigException(file + ": not an AIPerf profile_export.jsonl (a record without metadata)");
                }
                if (!"profiling".equals(meta.path("benchmark_phase").asText("profiling"))) {
                    continue;
                }
                if (r.hasNonNull("error") || !m.path("time_to_first_token").path("value").isNumber()) {
                    failed++;
                    continue;
                }
                JsonNode icl = m.path("inter_chunk_latency").path("value");
                double[] gaps = null;
                if (icl.isArray()) {
                    gaps = new double[icl.size()];
                    for (int j = 0; j < gaps.length; j++) {
                        gaps[j] = icl.get(j).asDouble();
                    }
                }
                JsonNode start = meta.path("request_start_ns");
                requests.add(new Measured(meta.hasNonNull("x_request_id") ? meta.get("x_request_id").asText() : null,
                        start.isNumber() ? start.asLong() / 1e6 : Double.NaN,
                        value(m, "time_to_first_token"), value(m, "request_latency"), value(m, "inter_token_latency"),
                        gaps, (int) value(m, "input_sequence_length", -1), (int) value(m, "output_sequence_length", -1)));
            }
        }
        return new Results(requests, failed, Double.NaN);
    }

    private static double value(JsonNode metrics, String name) {
        return value(metrics, name, Double.NaN);
    }

    private static double value(JsonNode metrics, String name, double absent) {
        JsonNode v = metrics.path(name).path("value");
        return v.isNumber() ? v.asDouble() : absent;
    }

    private static Results guidellm(JsonNode root, Path file) {
        JsonNode benchmarks = root.path("benchmarks");
        if (!benchmarks.isArray()) {
            throw new ConfigException(file + ": not a GuideLLM benchmarks report (no benchmarks array)");
        }
        List<Measured> requests = new ArrayList<>();
        int failed = 0;
        for (JsonNode b : benchmarks) {
            JsonNode byStatus = b.path("requests");
            failed += byStatus.path("errored").size() + byStatus.path("incomplete").size();
            for (JsonNode r : byStatus.path("successful")) {
                requests.add(new Measured(r.hasNonNull("request_id") ? r.get("request_id").asText() : null,
                        number(r, "request_start_time") * 1e3, number(r, "time_to_first_token_ms"),
                        number(r, "request_latency") * 1e3, number(r, "inter_token_latency_ms"), null,
                        r.path("prompt_tokens").asInt(-1), r.path("output_tokens").asInt(-1)));
            }
        }
        return new Results(requests, failed, Double.NaN);
    }

    private static double number(JsonNode n, String key) {
        JsonNode v = n.path(key);
        return v.isNumber() ? v.asDouble() : Double.NaN;
    }
}
