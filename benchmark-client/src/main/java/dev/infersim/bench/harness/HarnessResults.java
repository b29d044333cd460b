package dev.infersim.bench.harness;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.common.ConfigException;
import dev.infersim.common.TextKey;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPInputStream;

/**
 * Another harness's per-request results, read from its own output file (gzipped where the name ends in {@code .gz})
 * into one shape ({@link Measured}, ms; instants as Unix epoch ms), with what it was asked to do ({@link HarnessTarget}),
 * so that {@link HarnessCheck} can hold them against the server's truth. Fields read per format:
 * <ul>
 *   <li>{@code vllm}: the {@code vllm bench serve --save-result --save-detailed} JSON (and {@code benchmark_serving.py
 *       --save-result}, which always has the arrays): {@code ttfts}, {@code itls} (seconds), {@code input_lens},
 *       {@code output_lens}, {@code errors}; E2EL is TTFT + the sum of the request's ITLs and TPOT
 *       (E2EL - TTFT) / (output_len - 1), as vLLM derives them. Target: {@code request_rate} (a number or "inf"),
 *       {@code burstiness} (default 1, Poisson), {@code max_concurrency}. vLLM keeps no request id and no instant;
 *       infersim's own result names its per-request file ({@code infersim_detailed_file}, looked for beside the result
 *       when moved), whose {@code request_id}, {@code warmup} and {@code scheduled_time_s} are read too.</li>
 *   <li>{@code aiperf}: {@code profile_export.jsonl}: {@code metadata.x_request_id}, {@code metadata.request_start_ns},
 *       {@code metadata.benchmark_phase} (only {@code profiling} rows), {@code error}, and the metrics
 *       {@code time_to_first_token}, {@code request_latency}, {@code inter_token_latency} (its per-request TPOT),
 *       {@code inter_chunk_latency} (a list), {@code input_sequence_length}, {@code output_sequence_length} (ms and
 *       tokens, each {@code {"value", "unit"}}); the first token's instant is the start plus TTFT. Target: the
 *       {@code input_config.loadgen} of {@code profile_export_aiperf.json} beside it, where present.</li>
 *   <li>{@code guidellm}: the benchmarks report JSON: every {@code benchmarks[].requests.successful[]} entry's
 *       {@code response_id} (the server's {@code chatcmpl-<request id>}), {@code request_start_time} (epoch s),
 *       {@code request_latency} (s), {@code time_to_first_token_ms}, {@code inter_token_latency_ms} (its TPOT),
 *       {@code prompt_tokens}, {@code output_tokens} and {@code info.timings} ({@code targeted_start},
 *       {@code first_token_iteration}, {@code token_iterations}); {@code errored} and {@code incomplete} entries are
 *       counted as failed. Target: {@code benchmarks[0].config.strategy} ({@code type_}, {@code rate},
 *       {@code streams}) and {@code config.profile.max_concurrency}, for a report of one benchmark.</li>
 *   <li>{@code llmperf}: its {@code *_individual_responses.json}, a list of per-request metrics: {@code ttft_s},
 *       {@code end_to_end_latency_s}, {@code number_input_tokens}, {@code number_output_tokens} (its own tokenizer's
 *       count of the text), {@code error_code}; no id, no instant, no text; listed as the requests completed. Its {@code inter_token_latency_s} is its
 *       whole latency over the output count (TTFT included), not a TPOT, and is not read. Target: the
 *       {@code num_concurrent_requests} of the {@code *_summary.json} beside it (a closed loop of that many).</li>
 *   <li>{@code generic}: infersim's per-request JSON Lines for any harness ({@link GenericFormat}).</li>
 * </ul>
 * Every harness's generated text, where its format keeps it (vLLM's {@code generated_texts}, GuideLLM's {@code output},
 * the generic {@code text}), is read as its {@link TextKey}, which the truth log carries for each row.
 */
public final class HarnessResults {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The harness formats {@code check-harness} reads. */
    public enum Format {
        VLLM("a vllm bench serve result"), AIPERF("an AIPerf profile_export.jsonl"), GUIDELLM("a GuideLLM benchmarks report"),
        LLMPERF("an llmperf individual_responses.json"), GENERIC("infersim's generic per-request JSON Lines");

        private final String description;

        Format(String description) {
            this.description = description;
        }

        /** What a file of this format is, for messages ("a GuideLLM benchmarks report"). */
        String description() {
            return description;
        }

        public static Format parse(String s) {
            try {
                return valueOf(s.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new ConfigException("--format must be vllm, aiperf, guidellm, llmperf or generic, got '" + s + "'");
            }
        }
    }

    /**
     * One successful request as the harness measured it, in ms. {@code requestId} (the server's request id) is null,
     * and {@code startMs} (when the harness started its clock) and {@code firstTokenMs} (when it saw the first token),
     * both Unix epoch ms, are NaN where the format has none; {@code itlsMs} is null where the format keeps no per-gap
     * list; {@code chunks} (content chunks or reads that carried tokens) and token counts are -1 where absent;
     * {@code textKey} is the {@link TextKey} of the text it received, null where the format keeps no text.
     */
    public record Measured(String requestId, double startMs, double firstTokenMs, double ttftMs, double e2elMs,
                           double tpotMs, double[] itlsMs, int chunks, int promptTokens, int outputTokens,
                           String textKey) {

        /** Without a text. */
        public Measured(String requestId, double startMs, double firstTokenMs, double ttftMs, double e2elMs,
                        double tpotMs, double[] itlsMs, int chunks, int promptTokens, int outputTokens) {
            this(requestId, startMs, firstTokenMs, ttftMs, e2elMs, tpotMs, itlsMs, chunks, promptTokens, outputTokens, null);
        }

        /**
         * The same request with its durations (TTFT, E2EL, TPOT, ITLs) times {@code factor} and the first token's
         * instant moved to match: a harness that wrote another unit than its format declares.
         */
        public Measured durationsTimes(double factor) {
            double[] itls = itlsMs == null ? null : java.util.Arrays.stream(itlsMs).map(v -> v * factor).toArray();
            return new Measured(requestId, startMs, startMs + ttftMs * factor, ttftMs * factor, e2elMs * factor,
                    tpotMs * factor, itls, chunks, promptTokens, outputTokens, textKey);
        }
    }

    /**
     * What a result file holds: its successful requests in the harness's order, the failed count, the target, the
     * instants (ms, any origin) at which the harness planned its sends, where it records them (else empty), and how many
     * requests the harness sends ahead of its run by design and leaves out (a test request, declared warm-ups; -1 when
     * the format cannot say).
     */
    public record Results(List<Measured> requests, int failed, HarnessTarget target, double[] scheduledMs,
                          int leadRequests, Listed listed) {

        /** Requests listed in send order. */
        public Results(List<Measured> requests, int failed, HarnessTarget target, double[] scheduledMs, int leadRequests) {
            this(requests, failed, target, scheduledMs, leadRequests, Listed.BY_SEND);
        }

        /** The same results with each request replaced. */
        public Results withRequests(List<Measured> replaced) {
            return new Results(replaced, failed, target, scheduledMs, leadRequests, listed);
        }

        /** The same results, {@code n} more requests declared ahead of the run (a flag the file does not record). */
        public Results withLeadRequests(int n) {
            return new Results(requests, failed, target, scheduledMs, leadRequests < 0 ? -1 : leadRequests + n, listed);
        }
    }

    /** The order a format lists its requests in, which matching without instants relies on. */
    public enum Listed {
        /** As they were sent (vLLM's arrays, GuideLLM, AIPerf, the generic format). */
        BY_SEND,
        /** As they finished (llmperf appends each response as it completes). */
        BY_COMPLETION
    }

    private HarnessResults() {
    }

    public static Results read(Format format, Path file) {
        try {
            return switch (format) {
                case VLLM -> vllm(readTree(file), file);
                case AIPERF -> aiperf(file);
                case GUIDELLM -> guidellm(readTree(file), file);
                case LLMPERF -> llmperf(readTree(file), file);
                case GENERIC -> GenericFormat.read(file);
            };
        } catch (JsonProcessingException e) {
            throw new ConfigException(file + ": not " + format.description + " (invalid JSON at line "
                    + e.getLocation().getLineNr() + ": " + e.getOriginalMessage() + ")");
        } catch (IOException e) {
            throw new ConfigException(file + ": cannot read (" + e.getMessage() + ")");
        }
    }

    /** The server's request id in an OpenAI response id: vLLM (and the mock) answer {@code chatcmpl-ID} or {@code cmpl-ID}. */
    static String serverRequestId(String responseId) {
        if (responseId == null) {
            return null;
        }
        for (String prefix : new String[]{"chatcmpl-", "cmpl-"}) {
            if (responseId.startsWith(prefix)) {
                return responseId.substring(prefix.length());
            }
        }
        return responseId;
    }

    /** Reads {@code file}, through gunzip when its name ends in .gz. */
    static BufferedReader open(Path file) throws IOException {
        InputStream in = Files.newInputStream(file);
        if (file.getFileName().toString().endsWith(".gz")) {
            in = new GZIPInputStream(in, 1 << 16);
        }
        return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
    }

    static JsonNode readTree(Path file) throws IOException {
        try (BufferedReader in = open(file)) {
            return JSON.readTree(in);
        }
    }

    private static Results vllm(JsonNode root, Path file) throws IOException {
        JsonNode ttfts = root.path("ttfts");
        JsonNode itls = root.path("itls");
        JsonNode in = root.path("input_lens");
        JsonNode out = root.path("output_lens");
        if (!ttfts.isArray() || !itls.isArray() || !out.isArray() || ttfts.size() != itls.size() || ttfts.size() != out.size()) {
            throw new ConfigException(file + ": not a vllm bench serve --save-detailed result (arrays ttfts, itls and "
                    + "output_lens of one length expected)");
        }
        InfersimDetail detail = InfersimDetail.read(root.path("infersim_detailed_file"), file);
        JsonNode errors = root.path("errors");
        JsonNode texts = root.path("generated_texts");
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
            String id = detail.ids().size() == ttfts.size() ? detail.ids().get(i) : null;
            requests.add(new Measured(id, Double.NaN, Double.NaN, ttft, e2el, tpot, gaps, gaps.length + 1,
                    in.path(i).asInt(-1), outputLen, TextKey.of(texts.path(i).textValue())));
        }
        JsonNode rate = root.path("request_rate");
        double r = rate.isNumber() ? rate.asDouble() : "inf".equals(rate.asText()) ? Double.POSITIVE_INFINITY : Double.NaN;
        JsonNode cap = root.path("max_concurrency");
        int warmups = Math.max(detail.warmups(), root.path("num_warmups").asInt(0));
        HarnessTarget target = HarnessTarget.vllm(r, root.path("burstiness").asDouble(1), cap.isNumber() ? cap.asInt() : 0,
                warmups);
        // benchmark_serving.py and vllm bench serve send one test request, then their warm-ups, before the run; infersim's
        // bench also sends its client warm-ups, which its file does not list.
        int lead = detail.ids().isEmpty() ? 1 + warmups : -1;
        return new Results(requests, failed, target, detail.scheduledMs(), lead);
    }

    /** What infersim's per-request file adds to its vLLM-keyed result: ids, warm-ups and the planned send times. */
    private record InfersimDetail(List<String> ids, int warmups, double[] scheduledMs) {
        static InfersimDetail read(JsonNode name, Path result) throws IOException {
            Path file = name.isTextual() ? locate(Path.of(name.asText()), result) : null;
            if (file == null) {
                return new InfersimDetail(List.of(), 0, new double[0]);
            }
            java.util.TreeMap<Integer, JsonNode> rows = new java.util.TreeMap<>();
            try (JsonLines lines = new JsonLines(file, file.toString(), "an infersim per-request file")) {
                for (JsonNode row = lines.next(); row != null; row = lines.next()) {
                    rows.put(row.path("index").asInt(), row);
                }
            }
            List<String> ids = new ArrayList<>();
            double[] scheduled = new double[rows.size()];
            int warmups = 0;
            int n = 0;
            for (JsonNode row : rows.values()) {
                scheduled[n++] = row.path("scheduled_time_s").asDouble() * 1e3;
                if (row.path("warmup").asBoolean()) {
                    warmups++;
                } else {
                    ids.add(row.hasNonNull("request_id") ? row.get("request_id").asText() : null);
                }
            }
            return new InfersimDetail(ids, warmups, scheduled);
        }

        /** The named file, else one of its name (or its name + .gz) beside the result. */
        private static Path locate(Path named, Path result) {
            Path dir = result.toAbsolutePath().getParent();
            for (Path p : new Path[]{named, dir.resolve(named.getFileName()), dir.resolve(named.getFileName() + ".gz")}) {
                if (Files.isReadable(p)) {
                    return p;
                }
            }
            return null;
        }
    }

    private static Results aiperf(Path file) throws IOException {
        List<Measured> requests = new ArrayList<>();
        int failed = 0;
        try (JsonLines lines = new JsonLines(file, file.toString(), Format.AIPERF.description)) {
            for (JsonNode r = lines.next(); r != null; r = lines.next()) {
                int lineNo = lines.lineNo();
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
                JsonNode icl = m.path("inter_chunk_latency");
                double[] gaps = null;
                if (icl.path("value").isArray()) {
                    double toMs = TimeUnits.toMs(icl.path("unit").asText("ms"), file, "inter_chunk_latency", lineNo);
                    gaps = new double[icl.path("value").size()];
                    for (int j = 0; j < gaps.length; j++) {
                        gaps[j] = icl.path("value").get(j).asDouble() * toMs;
                    }
                }
                JsonNode start = meta.path("request_start_ns");
                double startMs = start.isNumber() ? start.asLong() / 1e6 : Double.NaN;
                double ttft = ms(m, "time_to_first_token", file, lineNo);
                requests.add(new Measured(meta.hasNonNull("x_request_id") ? meta.get("x_request_id").asText() : null,
                        startMs, startMs + ttft, ttft, ms(m, "request_latency", file, lineNo),
                        ms(m, "inter_token_latency", file, lineNo), gaps, gaps == null ? -1 : gaps.length + 1,
                        (int) value(m, "input_sequence_length", -1), (int) value(m, "output_sequence_length", -1)));
            }
        }
        HarnessTarget target = aiperfTarget(file);
        return new Results(requests, failed, target, new double[0], target.warmupRequests());
    }

    /**
     * AIPerf's target, from the {@code input_config.loadgen} of the {@code profile_export_aiperf.json} it writes beside
     * the JSONL (gzipped or not): {@code request_rate}, {@code request_rate_mode} (default poisson),
     * {@code concurrency}, {@code warmup_request_count}; unknown without that file.
     */
    private static HarnessTarget aiperfTarget(Path jsonl) throws IOException {
        Path dir = jsonl.toAbsolutePath().getParent();
        for (String name : new String[]{"profile_export_aiperf.json", "profile_export_aiperf.json.gz"}) {
            Path summary = dir.resolve(name);
            if (Files.isReadable(summary)) {
                JsonNode loadgen = readTree(summary).path("input_config").path("loadgen");
                double rate = number(loadgen, "request_rate");
                int cap = loadgen.path("concurrency").asInt(0);
                int warmups = loadgen.path("warmup_request_count").asInt(0);
                if (Double.isNaN(rate)) {
                    return new HarnessTarget(Double.NaN, cap > 0 ? HarnessTarget.Process.UNBOUNDED
                            : HarnessTarget.Process.UNKNOWN, Double.NaN, cap, warmups);
                }
                boolean constant = "constant".equalsIgnoreCase(loadgen.path("request_rate_mode").asText("poisson"));
                return constant ? new HarnessTarget(rate, HarnessTarget.Process.CONSTANT, Double.NaN, cap, warmups)
                        : new HarnessTarget(rate, HarnessTarget.Process.POISSON, 1, cap, warmups);
            }
        }
        return HarnessTarget.UNKNOWN;
    }

    /** An AIPerf time metric in ms, by the unit it declares ({@code {"value", "unit"}}); NaN when absent. */
    private static double ms(JsonNode metrics, String name, Path file, int lineNo) {
        JsonNode v = metrics.path(name);
        return v.path("value").isNumber()
                ? v.get("value").asDouble() * TimeUnits.toMs(v.path("unit").asText("ms"), file, name, lineNo) : Double.NaN;
    }

    private static double value(JsonNode metrics, String name, double absent) {
        JsonNode v = metrics.path(name).path("value");
        return v.isNumber() ? v.asDouble() : absent;
    }

    private static Results llmperf(JsonNode root, Path file) throws IOException {
        if (!root.isArray()) {
            throw new ConfigException(file + ": not an llmperf individual_responses.json (a list of requests expected)");
        }
        List<Measured> requests = new ArrayList<>();
        int failed = 0;
        for (JsonNode r : root) {
            if (!r.path("ttft_s").isNumber() || !r.path("end_to_end_latency_s").isNumber()) {
                throw new ConfigException(file + ": not an llmperf individual_responses.json (a request without ttft_s "
                        + "and end_to_end_latency_s)");
            }
            if (r.hasNonNull("error_code") || r.path("ttft_s").asDouble() <= 0) {
                failed++;
                continue;
            }
            requests.add(new Measured(null, Double.NaN, Double.NaN, r.get("ttft_s").asDouble() * 1e3,
                    r.get("end_to_end_latency_s").asDouble() * 1e3, Double.NaN, null, -1,
                    r.path("number_input_tokens").asInt(-1), r.path("number_output_tokens").asInt(-1)));
        }
        return new Results(requests, failed, llmperfTarget(file), new double[0], 0, Listed.BY_COMPLETION);
    }

    /** llmperf's closed loop: {@code num_concurrent_requests} of the {@code PREFIX_summary.json} beside the file. */
    private static HarnessTarget llmperfTarget(Path individual) throws IOException {
        String name = individual.getFileName().toString();
        int cut = name.indexOf("_individual_responses");
        if (cut < 0) {
            return HarnessTarget.UNKNOWN;
        }
        String prefix = name.substring(0, cut);
        for (String suffix : new String[]{"_summary.json", "_summary.json.gz"}) {
            Path summary = individual.toAbsolutePath().getParent().resolve(prefix + suffix);
            if (Files.isReadable(summary)) {
                int streams = readTree(summary).path("num_concurrent_requests").asInt(0);
                return new HarnessTarget(Double.NaN, HarnessTarget.Process.UNBOUNDED, Double.NaN, streams, 0);
            }
        }
        return HarnessTarget.UNKNOWN;
    }

    private static Results guidellm(JsonNode root, Path file) {
        JsonNode benchmarks = root.path("benchmarks");
        if (!benchmarks.isArray()) {
            throw new ConfigException(file + ": not a GuideLLM benchmarks report (no benchmarks array)");
        }
        List<Measured> requests = new ArrayList<>();
        List<Double> scheduled = new ArrayList<>();
        int failed = 0;
        for (JsonNode b : benchmarks) {
            JsonNode byStatus = b.path("requests");
            failed += byStatus.path("errored").size() + byStatus.path("incomplete").size();
            for (JsonNode r : byStatus.path("successful")) {
                JsonNode timings = r.path("info").path("timings");
                String id = r.hasNonNull("response_id") ? serverRequestId(r.get("response_id").asText()) : null;
                requests.add(new Measured(id, number(r, "request_start_time") * 1e3,
                        number(timings, "first_token_iteration") * 1e3, number(r, "time_to_first_token_ms"),
                        number(r, "request_latency") * 1e3, number(r, "inter_token_latency_ms"), null,
                        timings.path("token_iterations").asInt(-1), r.path("prompt_tokens").asInt(-1),
                        r.path("output_tokens").asInt(-1), TextKey.of(r.path("output").textValue())));
                if (timings.path("targeted_start").isNumber()) {
                    scheduled.add(timings.get("targeted_start").asDouble() * 1e3);
                }
            }
        }
        HarnessTarget target = benchmarks.size() == 1 ? guidellmTarget(benchmarks.get(0).path("config"))
                : HarnessTarget.UNKNOWN;
        return new Results(requests, failed, target, scheduled.stream().mapToDouble(Double::doubleValue).toArray(), 0);
    }

    /** GuideLLM's strategy: poisson and constant at {@code rate}; concurrent ({@code streams}), synchronous (1). */
    private static HarnessTarget guidellmTarget(JsonNode config) {
        JsonNode strategy = config.path("strategy");
        double rate = number(strategy, "rate");
        JsonNode cap = config.path("profile").path("max_concurrency");
        int limit = cap.isNumber() ? cap.asInt() : 0;
        return switch (strategy.path("type_").asText("")) {
            case "poisson" -> new HarnessTarget(rate, HarnessTarget.Process.POISSON, 1, limit, 0);
            case "constant" -> new HarnessTarget(rate, HarnessTarget.Process.CONSTANT, Double.NaN, limit, 0);
            case "concurrent" -> new HarnessTarget(Double.NaN, HarnessTarget.Process.UNBOUNDED, Double.NaN,
                    strategy.path("streams").asInt(0), 0);
            case "synchronous" -> new HarnessTarget(Double.NaN, HarnessTarget.Process.UNBOUNDED, Double.NaN, 1, 0);
            case "throughput" -> new HarnessTarget(Double.NaN, HarnessTarget.Process.UNBOUNDED, Double.NaN, limit, 0);
            default -> HarnessTarget.UNKNOWN;
        };
    }

    private static double number(JsonNode n, String key) {
        JsonNode v = n.path(key);
        return v.isNumber() ? v.asDouble() : Double.NaN;
    }
}
