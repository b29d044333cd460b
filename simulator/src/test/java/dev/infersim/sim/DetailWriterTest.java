package dev.infersim.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DetailWriterTest {

    @TempDir
    Path dir;

    @Test
    void writesOneExactJsonLinePerRequest() throws IOException {
        Path file = dir.resolve("d.jsonl");
        try (DetailWriter w = new DetailWriter(file)) {
            w.write(new RequestRecord(7, "chat", 1_000_000_000L, 1_000_000_000L, 1_024_768_721L, 2_500_000_000L, 512,
                    100, 256, 1_500_000, 23_268_721, 0, "length", null), false, new long[] {1, 2}, 2);
            w.write(new RequestRecord(8, "chat", 2_000_000_000L, 2_000_000_005L, -1, -1, 99_999, 0, -1, -1, -1, -1,
                    null, "prompt too long"), true, null, 0);
        }
        List<String> lines = Files.readAllLines(file).stream().filter(l -> !l.isBlank()).toList();
        assertEquals(2, lines.size());
        ObjectMapper json = new ObjectMapper();
        JsonNode ok = json.readTree(lines.get(0));
        assertEquals("24.768721", ok.get("ttft_ms").asText());
        assertEquals("1.5", ok.get("queue_ms").asText());
        assertEquals("1.0", ok.get("start_time_s").asText());
        assertEquals("0.0", ok.get("client_queue_ms").asText());
        assertEquals((2_500_000_000L - 1_024_768_721L) / 99 / 1e6, ok.get("tpot_ms").asDouble(), 1e-9);
        assertEquals(256, ok.get("cached_tokens").asInt());
        assertFalse(ok.get("warmup").asBoolean());
        JsonNode failed = json.readTree(lines.get(1));
        assertEquals("prompt too long", failed.get("error").asText());
        assertTrue(lines.get(1).contains("\"client_queue_ms\":0.000005,"), lines.get(1));
        assertTrue(failed.get("warmup").asBoolean());
        assertFalse(failed.has("ttft_ms"));
        assertFalse(ok.has("chunk_gaps_ms"), "token gaps only when asked for");
    }

    @Test
    void tokenGapsComeLastInMillisecondsOnePerTokenAfterTheFirst() throws IOException {
        Path file = dir.resolve("g.jsonl");
        try (DetailWriter w = new DetailWriter(file, true)) {
            w.write(new RequestRecord(3, "chat", 0, 0, 20_000_000L, 35_500_001L, 64, 3, 0, 0, 20_000_000L, 0, "length",
                    null), false, new long[] {20_000_000L, 27_000_000L, 35_500_001L, 0}, 3);
        }
        String line = Files.readAllLines(file).get(0);
        assertTrue(line.endsWith(",\"chunk_gaps_ms\":[7.0,8.500001]}"), line);
    }
}
