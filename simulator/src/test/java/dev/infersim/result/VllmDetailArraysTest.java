package dev.infersim.result;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class VllmDetailArraysTest {
    private static final long MS = 1_000_000L;

    @TempDir
    Path dir;

    private static RequestRecord succeeded(long index, int promptTokens, long ttftNanos, long... gapNanos) {
        long last = ttftNanos;
        for (long gap : gapNanos) {
            last += gap;
        }
        return new RequestRecord(index, "random", 0, 0, ttftNanos, last, promptTokens, gapNanos.length + 1, -1, -1, -1,
                -1, "length", null);
    }

    private static RequestRecord failed(long index, int promptTokens, String message) {
        return new RequestRecord(index, "random", 0, 0, -1, -1, promptTokens, 0, -1, -1, -1, -1, null, message);
    }

    private static ClientObservation client(String text, String errorType) {
        return new ClientObservation(0, text == null ? 0 : 1, -1, -1, -1, null, errorType, text);
    }

    @Test
    void arraysFollowRequestOrderInSecondsWithVllmsEntriesForFailures() throws Exception {
        Path file = dir.resolve("run.jsonl");
        try (RequestLogWriter log = new RequestLogWriter(file, true)) {
            // in the order the requests ended, which is not request order
            log.write(succeeded(2, 30, 50 * MS, 10 * MS, 12 * MS), 0, false, client("a \"quoted\" caf\u00e9", null),
                    new long[] {10 * MS, 12 * MS}, 2);
            log.write(failed(0, 10, "too many requests"), 0, false, client(null, "http_429"), null, 0);
            log.write(succeeded(1, 20, 40 * MS), 0, false, client("x", null), new long[0], 0);
            log.write(failed(3, 40, ""), 0, false, client(null, "http_500"), null, 0);
            log.write(succeeded(4, 50, 40 * MS), 0, true, client("warm", null), new long[0], 0);
        }

        JsonNode json = new ObjectMapper().readTree(new ObjectMapper().writeValueAsString(new Holder(VllmDetailArrays.of(file))));

        List<String> keys = new ArrayList<>();
        json.fieldNames().forEachRemaining(keys::add);
        assertEquals(List.of("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"), keys);
        assertEquals("[10,20,30,40]", json.get("input_lens").toString());
        assertEquals("[0,1,3,0]", json.get("output_lens").toString(), "failures count no output, as in vLLM");
        assertEquals("[0.0,0.04,0.05,0.0]", json.get("ttfts").toString());
        assertEquals("[[],[],[0.01,0.012],[]]", json.get("itls").toString());
        assertEquals(List.of("", "x", "a \"quoted\" caf\u00e9", ""), texts(json.get("generated_texts")));
        assertEquals(List.of("too many requests", "", "", "http_500"), texts(json.get("errors")),
                "a failure without a message keeps its type");
    }

    /** The arrays are written into the result object that holds them. */
    private record Holder(@JsonUnwrapped VllmDetailArrays arrays) {
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
