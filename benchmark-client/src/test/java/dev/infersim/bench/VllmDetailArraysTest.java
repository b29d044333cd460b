package dev.infersim.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.workload.WorkloadRequest;
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

    private static Exchange request(long index, int promptTokens) {
        Exchange x = new Exchange(null, null, null, null, null);
        x.request = new WorkloadRequest(index, 0, promptTokens, 0, -1, 8, 8, index, 0, false, "random", null);
        x.sendNanos = 0;
        return x;
    }

    private static Exchange succeeded(long index, int promptTokens, String text, long ttftNanos, long... gapNanos) {
        Exchange x = request(index, promptTokens);
        x.firstTokenNanos = ttftNanos;
        x.lastTokenNanos = ttftNanos;
        for (long gap : gapNanos) {
            x.gapNanos[x.gapCount++] = gap;
            x.lastTokenNanos += gap;
        }
        x.chunks = gapNanos.length + 1;
        x.usageCompletionTokens = x.chunks;
        x.generated.append(text);
        return x;
    }

    private static Exchange failed(long index, int promptTokens, String type, String message) {
        Exchange x = request(index, promptTokens);
        x.errorType = type;
        x.errorMessage = message;
        return x;
    }

    @Test
    void arraysFollowRequestOrderInSecondsWithVllmsEntriesForFailures() throws Exception {
        Path file = dir.resolve("run.jsonl");
        try (RequestLog log = new RequestLog(file)) {
            // in the order the requests ended, which is not request order
            log.write(succeeded(2, 30, "a \"quoted\" caf\u00e9", 50 * MS, 10 * MS, 12 * MS), 0);
            log.write(failed(0, 10, "http_429", "too many requests"), 0);
            log.write(succeeded(1, 20, "x", 40 * MS), 0);
            log.write(failed(3, 40, "http_500", ""), 0);
        }

        JsonNode json = new ObjectMapper().readTree(new ObjectMapper().writeValueAsString(VllmDetailArrays.of(file)));

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

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
