package dev.infersim.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.common.ConfigException;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The mock server's truth log ({@code infersim serve --truth-log}), read back in wall time (what a harness measures):
 * one {@link Row} per choice, ordered by arrival at the server. A name ending in {@code .gz} is read through gunzip.
 */
public final class TruthTimeline {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One choice as the server timed it; instants are Unix epoch ms, {@code tokenTimesMs} one per output token.
     */
    public record Row(String requestId, int index, double arrivalMs, double firstTokenMs, double finishedMs,
                      double[] tokenTimesMs, int promptTokens, int completionTokens, String finishReason) {
        public double ttftMs() {
            return firstTokenMs - arrivalMs;
        }

        public double e2elMs() {
            return finishedMs - arrivalMs;
        }

        /** Mean gap between output tokens after the first ({@code vllm bench serve}'s TPOT); NaN with one token. */
        public double tpotMs() {
            int n = tokenTimesMs.length;
            return n < 2 ? Double.NaN : (tokenTimesMs[n - 1] - tokenTimesMs[0]) / (n - 1);
        }

        /** First to last output token (the decode span a harness sees as E2EL - TTFT). */
        public double decodeMs() {
            int n = tokenTimesMs.length;
            return n < 2 ? 0 : tokenTimesMs[n - 1] - tokenTimesMs[0];
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
        try (BufferedReader in = HarnessResults.open(file)) {
            String line;
            int lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode n;
                try {
                    n = JSON.readTree(line);
                } catch (JsonProcessingException e) {
                    throw new ConfigException("--truth " + file + ": line " + lineNo + " is not JSON (" + e.getOriginalMessage() + ")");
                }
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
        double[] t = new double[times.size()];
        for (int i = 0; i < t.length; i++) {
            t[i] = times.get(i).asDouble();
        }
        return new Row(n.get("request_id").asText(), n.path("index").asInt(), wall.get("arrival_ms").asDouble(),
                wall.get("first_token_ms").asDouble(), wall.path("finished_ms").asDouble(), t,
                n.path("prompt_tokens").asInt(), n.path("completion_tokens").asInt(), n.path("finish_reason").asText());
    }
}
