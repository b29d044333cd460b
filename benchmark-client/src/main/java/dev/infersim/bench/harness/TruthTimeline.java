package dev.infersim.bench.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.common.ConfigException;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The mock server's truth log ({@code infersim serve --truth-log}), read back in wall time (what a harness measures):
 * one {@link Row} per choice, ordered by arrival at the server. A name ending in {@code .gz} is read through gunzip.
 *
 * <p>A harness is held against the truth at the wire where the log has it (see mock-server's README, "Truth at the
 * wire"): the request counts from the instant its head was read ({@code received_ms}), each token from the instant
 * its chunk was handed to the connection ({@code token_written_ms}, {@code first_token_written_ms},
 * {@code last_token_written_ms}). The mock's own ingest (reading, parsing, tokenizing) and its write lateness are the
 * server's time, so the harness is charged only for what lies between the wire and itself. Logs written before those
 * keys existed are read at the planned instants.
 */
public final class TruthTimeline {

    /**
     * One choice as the server timed it; instants are Unix epoch ms. {@code tokenTimesMs} are the engine's planned
     * instants, one per output token; {@code receivedMs}, {@code firstWrittenMs}, {@code lastWrittenMs} (NaN where the
     * log lacks them) and {@code tokenWrittenMs} (null) the wire's, {@code receivedLatenessMs} the mock's bound on how
     * long the request's head had waited in its socket before it was read (NaN where not logged). {@code textKey} is the output text's
     * {@link dev.infersim.common.TextKey} (null where the log lacks it), {@code promptKey} its prompt's (likewise);
     * {@code attempt} how many times the server had been asked for this request, this answer included (1 where the log
     * does not say).
     */
    public record Row(String requestId, int index, double arrivalMs, double firstTokenMs, double finishedMs,
                      double[] tokenTimesMs, int promptTokens, int completionTokens, String finishReason,
                      double receivedMs, double receivedLatenessMs, double firstWrittenMs, double lastWrittenMs,
                      double[] tokenWrittenMs, String textKey, String promptKey, int attempt) {

        /** A row with the planned instants only (a log written before the wire keys). */
        public Row(String requestId, int index, double arrivalMs, double firstTokenMs, double finishedMs,
                   double[] tokenTimesMs, int promptTokens, int completionTokens, String finishReason) {
            this(requestId, index, arrivalMs, firstTokenMs, finishedMs, tokenTimesMs, promptTokens, completionTokens,
                    finishReason, Double.NaN, Double.NaN, Double.NaN, Double.NaN, null, null, null, 1);
        }

        /** When the server had the request: its head read off the wire, else the engine's arrival. */
        public double startMs() {
            return Double.isFinite(receivedMs) ? receivedMs : arrivalMs;
        }

        /** Each token's instant at the wire (its chunk handed to the connection), else as planned. */
        public double[] tokenMs() {
            return tokenWrittenMs != null && tokenWrittenMs.length == tokenTimesMs.length ? tokenWrittenMs : tokenTimesMs;
        }

        /** The first token at the wire, else as planned. */
        public double firstTokenWireMs() {
            return Double.isFinite(firstWrittenMs) ? firstWrittenMs : firstTokenMs;
        }

        /** The last token at the wire, else the planned finish. */
        public double lastTokenWireMs() {
            return Double.isFinite(lastWrittenMs) ? lastWrittenMs : finishedMs;
        }

        /** The server's TTFT at the wire: head read to first token written. */
        public double ttftMs() {
            return firstTokenWireMs() - startMs();
        }

        /** The server's E2EL at the wire: head read to last token written. */
        public double e2elMs() {
            return lastTokenWireMs() - startMs();
        }

        /** The mock's own reading, parsing and tokenizing before the engine had the request; 0 where not logged. */
        public double ingestMs() {
            return Double.isFinite(receivedMs) ? arrivalMs - receivedMs : 0;
        }

        /** Mean gap between output tokens after the first ({@code vllm bench serve}'s TPOT); NaN with one token. */
        public double tpotMs() {
            double[] t = tokenMs();
            int n = t.length;
            return n < 2 ? Double.NaN : (t[n - 1] - t[0]) / (n - 1);
        }

        /** First to last output token (the decode span a harness sees as E2EL - TTFT). */
        public double decodeMs() {
            double[] t = tokenMs();
            int n = t.length;
            return n < 2 ? 0 : t[n - 1] - t[0];
        }

        /** Gaps between consecutive output tokens. */
        public int gaps() {
            return Math.max(0, tokenTimesMs.length - 1);
        }
    }

    private TruthTimeline() {
    }

    /** Every row of {@code file}, by arrival (ties by request id and choice); rows without a first token are left out. */
    public static List<Row> read(Path file) {
        List<Row> rows = new ArrayList<>();
        try (JsonLines lines = new JsonLines(file, "--truth " + file, "an infersim truth log")) {
            for (JsonNode n = lines.next(); n != null; n = lines.next()) {
                int lineNo = lines.lineNo();
                Row r = row(n, file, lineNo);
                if (r != null) {
                    rows.add(r);
                }
            }
        } catch (IOException e) {
            throw new ConfigException("--truth " + file + ": " + e.getMessage());
        }
        rows.sort(Comparator.comparingDouble(Row::arrivalMs).thenComparing(Row::requestId).thenComparingInt(Row::index));
        return rows;
    }

    private static Row row(JsonNode n, Path file, int lineNo) {
        JsonNode wall = n.path("wall");
        JsonNode times = wall.path("token_times_ms");
        if (!n.hasNonNull("request_id") || !wall.path("arrival_ms").isNumber() || !times.isArray()) {
            throw new ConfigException("--truth " + file + ": line " + lineNo
                    + " is not a truth-log row (request_id, wall.arrival_ms and wall.token_times_ms expected)");
        }
        if (!wall.path("first_token_ms").isNumber()) {
            return null;
        }
        double[] t = numbers(times);
        JsonNode written = wall.path("token_written_ms");
        return new Row(n.get("request_id").asText(), n.path("index").asInt(), wall.get("arrival_ms").asDouble(),
                wall.get("first_token_ms").asDouble(), wall.path("finished_ms").asDouble(), t,
                n.path("prompt_tokens").asInt(), n.path("completion_tokens").asInt(), n.path("finish_reason").asText(),
                number(wall, "received_ms"), number(wall, "received_lateness_ms"), number(wall, "first_token_written_ms"),
                number(wall, "last_token_written_ms"),
                written.isArray() ? numbers(written) : null,
                n.hasNonNull("output_text_sha256") ? n.get("output_text_sha256").asText() : null,
                n.hasNonNull("prompt_sha256") ? n.get("prompt_sha256").asText() : null,
                Math.max(1, n.path("attempt").asInt(1)));
    }

    private static double[] numbers(JsonNode array) {
        double[] v = new double[array.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = array.get(i).asDouble();
        }
        return v;
    }

    private static double number(JsonNode n, String key) {
        JsonNode v = n.get(key);
        return v != null && v.isNumber() ? v.asDouble() : Double.NaN;
    }
}
