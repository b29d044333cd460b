package dev.infersim.bench.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.bench.harness.HarnessResults.Measured;
import dev.infersim.bench.harness.HarnessResults.Results;
import dev.infersim.common.ConfigException;
import dev.infersim.common.TextKey;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * infersim's generic per-request format ({@code check-harness --format generic}), so that any harness can be checked:
 * JSON Lines, a header line first, then one line per request.
 *
 * <pre>
 * {"format": "infersim-harness/1", "time_unit": "ms", "clock": "unix",
 *  "target": {"request_rate": 10, "process": "poisson", "burstiness": 1, "max_concurrency": 0, "warmup_requests": 0}}
 * {"id": "r-0", "start": 1795925281924.4, "first_token": 1795925281940.1, "end": 1795925282041.0,
 *  "chunk_times": [1795925281940.1, 1795925281946.6], "prompt_tokens": 32, "output_tokens": 16, "text": " made state"}
 * </pre>
 *
 * Header: {@code format} (required, {@code infersim-harness/1}); {@code time_unit} (required: {@code s}, {@code ms},
 * {@code us} or {@code ns}), the unit of every time in the file; {@code clock} ({@code unix}, the default: instants
 * are since the Unix epoch on the machine the server runs on; {@code relative}: instants from any origin, of which only
 * differences are used); {@code target} (optional): what the harness was asked for ({@code process} one of
 * {@code poisson}, {@code gamma}, {@code constant}, {@code unbounded}).
 *
 * <p>Each request: {@code start} (when its clock started; the send), {@code first_token} and {@code end} (when its
 * first and last token were read) as instants, or {@code ttft} and {@code e2el} as durations where it keeps no instant;
 * optional {@code id} (the server's request id, or the {@code x-request-id} the harness sent, which the mock keeps),
 * {@code chunk_times} (the instant of every content chunk read, the first token's first) or {@code itl} (the gaps
 * between them), {@code tpot}, {@code prompt_tokens}, {@code output_tokens}, {@code text} (the generated text) or
 * {@code text_sha256} (its {@link TextKey}), {@code scheduled} (the instant its send was planned for), {@code warmup}
 * (true: sent but not measured) and {@code error} (anything but null, false or "": the request failed).
 */
final class GenericFormat {
    static final String NAME = "infersim-harness/1";

    private GenericFormat() {
    }

    static Results read(Path file) throws IOException {
        List<Measured> requests = new ArrayList<>();
        List<Double> scheduled = new ArrayList<>();
        int failed = 0;
        int warmups = 0;
        Header header = null;
        try (JsonLines lines = new JsonLines(file, file.toString(), HarnessResults.Format.GENERIC.description())) {
            for (JsonNode n = lines.next(); n != null; n = lines.next()) {
                int lineNo = lines.lineNo();
                if (header == null) {
                    header = Header.of(n, file, lineNo);
                    continue;
                }
                if (n.path("warmup").asBoolean(false)) {
                    warmups++;
                    continue;
                }
                JsonNode error = n.get("error");
                if (error != null && !error.isNull() && !(error.isBoolean() && !error.asBoolean())
                        && !(error.isTextual() && error.asText().isEmpty())) {
                    failed++;
                    continue;
                }
                requests.add(request(n, header, file, lineNo));
                if (n.path("scheduled").isNumber()) {
                    scheduled.add(n.get("scheduled").asDouble() * header.toMs);
                }
            }
        }
        if (header == null) {
            throw new ConfigException(file + ": empty (a header line with \"format\": \"" + NAME + "\" expected)");
        }
        HarnessTarget t = header.target;
        if (warmups > 0 && t.warmupRequests() == 0) {
            t = new HarnessTarget(t.rateReqPerS(), t.process(), t.burstiness(), t.maxConcurrency(), warmups);
        }
        return new Results(requests, failed, t, scheduled.stream().mapToDouble(Double::doubleValue).toArray(),
                t.warmupRequests());
    }

    private static Measured request(JsonNode n, Header h, Path file, int lineNo) {
        double start = number(n, "start", h.toMs);
        double first = number(n, "first_token", h.toMs);
        double end = number(n, "end", h.toMs);
        double ttft = Double.isFinite(start) && Double.isFinite(first) ? first - start : number(n, "ttft", h.toMs);
        double e2el = Double.isFinite(start) && Double.isFinite(end) ? end - start : number(n, "e2el", h.toMs);
        if (!Double.isFinite(ttft) || !Double.isFinite(e2el)) {
            throw new ConfigException(file + ": line " + lineNo + ": a request needs start, first_token and end, or ttft "
                    + "and e2el");
        }
        double[] itls = null;
        int chunks = -1;
        JsonNode times = n.path("chunk_times");
        JsonNode gaps = n.path("itl");
        if (times.isArray() && !times.isEmpty()) {
            chunks = times.size();
            itls = new double[chunks - 1];
            for (int i = 1; i < chunks; i++) {
                itls[i - 1] = (times.get(i).asDouble() - times.get(i - 1).asDouble()) * h.toMs;
            }
        } else if (gaps.isArray()) {
            itls = new double[gaps.size()];
            for (int i = 0; i < itls.length; i++) {
                itls[i] = gaps.get(i).asDouble() * h.toMs;
            }
            chunks = itls.length + 1;
        }
        int out = n.path("output_tokens").asInt(-1);
        double tpot = n.path("tpot").isNumber() ? n.get("tpot").asDouble() * h.toMs
                : out > 1 ? (e2el - ttft) / (out - 1) : Double.NaN;
        String key = n.hasNonNull("text_sha256") ? n.get("text_sha256").asText() : TextKey.of(n.path("text").textValue());
        boolean unix = h.unixClock && Double.isFinite(start);
        return new Measured(n.hasNonNull("id") ? n.get("id").asText() : null, unix ? start : Double.NaN,
                unix ? start + ttft : Double.NaN, ttft, e2el, tpot, itls, chunks, n.path("prompt_tokens").asInt(-1), out,
                key);
    }

    private static double number(JsonNode n, String key, double toMs) {
        JsonNode v = n.get(key);
        return v != null && v.isNumber() ? v.asDouble() * toMs : Double.NaN;
    }

    /** The header line: the unit of every time, whether instants are Unix time, and the target. */
    private record Header(double toMs, boolean unixClock, HarnessTarget target) {
        static Header of(JsonNode n, Path file, int lineNo) {
            if (!NAME.equals(n.path("format").asText())) {
                throw new ConfigException(file + ": line " + lineNo + " is not the header of " + NAME
                        + " (\"format\": \"" + NAME + "\" and \"time_unit\" expected first)");
            }
            if (!n.path("time_unit").isTextual()) {
                throw new ConfigException(file + ": line " + lineNo + ": the header declares no time_unit (s, ms, us or ns)");
            }
            double toMs = TimeUnits.toMs(n.get("time_unit").asText(), file, "time_unit", lineNo);
            String clock = n.path("clock").asText("unix");
            if (!clock.equals("unix") && !clock.equals("relative")) {
                throw new ConfigException(file + ": line " + lineNo + ": clock must be unix or relative, got '" + clock + "'");
            }
            return new Header(toMs, clock.equals("unix"), target(n.path("target"), file, lineNo));
        }

        private static HarnessTarget target(JsonNode t, Path file, int lineNo) {
            if (t.isMissingNode() || t.isNull()) {
                return HarnessTarget.UNKNOWN;
            }
            double rate = t.path("request_rate").isNumber() ? t.get("request_rate").asDouble() : Double.NaN;
            int cap = t.path("max_concurrency").asInt(0);
            int warmups = t.path("warmup_requests").asInt(0);
            String process = t.path("process").asText(Double.isNaN(rate) ? "unknown" : "poisson").toLowerCase(Locale.ROOT);
            return switch (process) {
                case "poisson" -> new HarnessTarget(rate, HarnessTarget.Process.POISSON, 1, cap, warmups);
                case "gamma" -> new HarnessTarget(rate, HarnessTarget.Process.GAMMA, t.path("burstiness").asDouble(1), cap,
                        warmups);
                case "constant" -> new HarnessTarget(rate, HarnessTarget.Process.CONSTANT, Double.NaN, cap, warmups);
                case "unbounded" -> new HarnessTarget(Double.NaN, HarnessTarget.Process.UNBOUNDED, Double.NaN, cap, warmups);
                case "unknown" -> new HarnessTarget(rate, HarnessTarget.Process.UNKNOWN, Double.NaN, cap, warmups);
                default -> throw new ConfigException(file + ": line " + lineNo + ": target.process must be poisson, gamma, "
                        + "constant or unbounded, got '" + process + "'");
            };
        }
    }
}
