package dev.infersim.result;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RequestLogTest {
    private static final RequestRecord OK = new RequestRecord(7, "chat", 1_000_000_000L, 1_000_000_000L, 1_024_768_721L,
            2_500_000_000L, 512, 100, 256, 1_500_000, 23_268_721, 0, "length", null);
    private static final RequestRecord FAILED = new RequestRecord(8, "chat", 2_000_000_000L, 2_000_000_005L, -1, -1,
            99_999, 0, -1, -1, -1, -1, null, "prompt too long");

    @TempDir
    Path dir;

    @Test
    void writesOneExactJsonLinePerRequest() throws IOException {
        Path file = dir.resolve("d.jsonl");
        try (RequestLogWriter w = new RequestLogWriter(file, false)) {
            w.write(OK, 0, false, null, new long[] {1}, 1);
            w.write(FAILED, 0, true, null, null, 0);
        }
        List<String> lines = Files.readAllLines(file).stream().filter(l -> !l.isBlank()).toList();
        assertEquals(2, lines.size());
        ObjectMapper json = new ObjectMapper();
        JsonNode ok = json.readTree(lines.get(0));
        assertEquals("24.768721", ok.get("ttft_ms").asText());
        assertEquals("1.5", ok.get("queue_ms").asText());
        assertEquals("1.0", ok.get("scheduled_time_s").asText());
        assertEquals("0.0", ok.get("client_queue_ms").asText());
        assertEquals((2_500_000_000L - 1_024_768_721L) / 99 / 1e6, ok.get("tpot_ms").asDouble(), 1e-9);
        assertEquals(256, ok.get("cached_tokens").asInt());
        assertFalse(ok.get("warmup").asBoolean());
        JsonNode failed = json.readTree(lines.get(1));
        assertEquals("prompt too long", failed.get("error").asText());
        assertTrue(lines.get(1).contains("\"client_queue_ms\":0.000005,"), lines.get(1));
        assertTrue(failed.get("warmup").asBoolean());
        assertFalse(failed.has("ttft_ms"));
        assertFalse(ok.has("chunk_gaps_ms"), "chunk gaps only when asked for");
        assertFalse(ok.has("send_lag_ms"), "client keys only from a client");
    }

    @Test
    void chunkGapsComeLastInMilliseconds() throws IOException {
        Path file = dir.resolve("g.jsonl");
        try (RequestLogWriter w = new RequestLogWriter(file, true)) {
            w.write(new RequestRecord(3, "chat", 0, 0, 20_000_000L, 35_500_001L, 64, 3, 0, 0, 20_000_000L, 0, "length",
                    null), 0, false, null, new long[] {7_000_000L, 8_500_001L, 0}, 2);
        }
        String line = Files.readAllLines(file).get(0);
        assertTrue(line.endsWith(",\"chunk_gaps_ms\":[7.0,8.500001]}"), line);
    }

    @Test
    void theReaderGivesBackExactlyWhatWasWrittenInRequestOrderRelativeToTheScheduleStart() {
        Path file = dir.resolve("r.jsonl");
        long start = 5_000_000_000L;
        ClientObservation seen = new ClientObservation(12_345, 3, 512, 24_000_000, 1_499_000_000, "cmpl-7", null, "hi");
        ClientObservation refused = new ClientObservation(0, 0, -1, -1, -1, null, "http_400", null);
        try (RequestLogWriter w = new RequestLogWriter(file, true)) {
            w.write(shift(FAILED, start), start, true, refused, null, 0);
            w.write(shift(OK, start), start, false, seen, new long[] {1_000_001, 2}, 2);
        }
        List<RequestLogReader.Row> rows = new ArrayList<>();
        new RequestLogReader(file).forEach(true, rows::add);

        assertEquals(2, rows.size());
        RequestLogReader.Row ok = rows.get(0);
        assertEquals(OK, ok.record(), "times come back on a clock whose zero is the schedule's start");
        assertEquals(seen, ok.client());
        assertArrayEquals(new long[] {1_000_001, 2}, ok.chunkGapNanos());
        assertFalse(ok.warmup());
        RequestLogReader.Row failed = rows.get(1);
        assertEquals(FAILED, failed.record());
        assertEquals("http_400", failed.client().errorType());
        assertTrue(failed.warmup());

        List<RequestLogReader.Row> short_ = new ArrayList<>();
        new RequestLogReader(file).forEach(false, short_::add);
        assertEquals(0, short_.get(0).chunkGapNanos().length, "the long fields only when asked for");
        assertNull(short_.get(0).client().generatedText());
    }

    private static RequestRecord shift(RequestRecord r, long by) {
        return new RequestRecord(r.index(), r.requestClass(), r.scheduledNanos() + by, r.startNanos() + by,
                r.firstTokenNanos() < 0 ? -1 : r.firstTokenNanos() + by, r.lastTokenNanos() < 0 ? -1 : r.lastTokenNanos() + by,
                r.promptTokens(), r.outputTokens(), r.cachedPromptTokens(), r.queueNanos(), r.prefillNanos(),
                r.preemptions(), r.finishReason(), r.error());
    }
}
