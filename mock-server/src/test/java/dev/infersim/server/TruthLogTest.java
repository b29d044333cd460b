package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.TextKey;
import dev.infersim.server.config.FaultSettings;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.server.routes.HttpBasics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --truth-log}: the rows written to the file and served at /infersim/truth are the responses' ground truth. */
class TruthLogTest {
    @TempDir
    Path dir;

    @Test
    void everyFinishedChoiceIsLoggedWithTheResponsesTimeline() throws Exception {
        Path file = dir.resolve("truth.jsonl");
        TruthLog log = TruthLog.open(file, TruthLog.DEFAULT_RING_CHARS);
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).truthLog(log).build());
        JsonNode streamed;
        StringBuilder streamedText = new StringBuilder();
        JsonNode whole;
        JsonNode wholeBody;
        TestServers.Reply page;
        TestServers.Reply bad;
        try {
            TestServers.Stream s = TestServers.stream(server, "/v1/chat/completions", """
                    {"messages":[{"role":"user","content":"hi"}],"max_tokens":5,"ignore_eos":true,"stream":true,
                     "infersim":{"token_times":true}}""", "x-request-id", "req-a");
            streamed = s.events().get(s.events().size() - 2).json().get("infersim");
            for (TestServers.Event e : s.events().subList(0, s.events().size() - 1)) {
                streamedText.append(e.json().path("choices").path(0).path("delta").path("content").asText(""));
            }
            wholeBody = TestServers.post(server, "/v1/completions", """
                    {"prompt":"Once upon","max_tokens":3,"ignore_eos":true,"n":2,"temperature":1}""",
                    "x-request-id", "req-b").json();
            whole = wholeBody.get("infersim");
            assertTrue(TestServers.eventually(5, () -> log.written() == 3), "three rows written");
            page = TestServers.get(server, "/infersim/truth?since=1");
            bad = TestServers.get(server, "/infersim/truth?since=x");
        } finally {
            TestServers.close(server);
            log.close();
        }

        List<JsonNode> rows = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            rows.add(Json.MAPPER.readTree(line));
        }
        assertEquals(3, rows.size());
        assertEquals(List.of(1L, 2L, 3L), rows.stream().map(r -> r.get("seq").asLong()).toList());
        JsonNode a = rows.get(0);
        assertEquals("req-a", a.get("request_id").asText());
        assertTrue(a.get("lora").isNull(), "the base model");
        assertEquals(choiceOf(streamed, 0), rowChoice(a));
        // The text's identity is the key of what the client read, whitespace aside.
        assertEquals(5, streamedText.toString().trim().split(" ").length, streamedText.toString());
        assertEquals(TextKey.of(streamedText.toString()), a.get("output_text_sha256").asText());
        assertEquals(TextKey.of(" " + streamedText.toString().trim().replace(" ", "\n") + "\n"),
                a.get("output_text_sha256").asText());
        // The two choices of one prompt share its key; another prompt has another.
        assertEquals(rows.get(1).get("prompt_sha256"), rows.get(2).get("prompt_sha256"));
        assertTrue(!a.get("prompt_sha256").equals(rows.get(1).get("prompt_sha256")), a.toString());
        assertEquals(5, a.get("model").get("token_times_ms").size());
        assertEquals(5, a.get("wall").get("token_times_ms").size());
        // The response asked for no token times, the log has them anyway; the rest is the response's truth.
        for (int i = 1; i <= 2; i++) {
            ObjectNode row = rowChoice(rows.get(i));
            assertEquals(3, row.get("model").get("token_times_ms").size());
            ((ObjectNode) row.get("model")).remove("token_times_ms");
            ((ObjectNode) row.get("wall")).remove("token_times_ms");
            assertEquals(TextKey.of(choiceOf(wholeBody, row.get("index").asInt()).path("text").asText("")),
                    rows.get(i).get("output_text_sha256").asText());
            assertEquals(choiceOf(whole, row.get("index").asInt()), row);
            assertEquals("req-b", rows.get(i).get("request_id").asText());
        }

        assertEquals(200, page.status());
        assertEquals("application/x-ndjson", page.header("content-type"));
        assertEquals("3", page.header("x-infersim-truth-next"));
        assertEquals("0", page.header("x-infersim-truth-missed"));
        assertEquals("0", page.header("x-infersim-truth-dropped"));
        assertEquals(Files.readAllLines(file).subList(1, 3), page.raw().body().lines().toList());
        assertEquals(400, bad.status());
    }

    /**
     * Beside each planned instant the row says what reached the wire: when the request's head was read (before its
     * parse; ingest from there to the engine's arrival), and when each token's chunk was handed to the connection. A
     * first token held back 300 ms (the slow_first_token fault) is planned on time but written 300 ms late; the rest
     * of the stream is written within the write lateness the row states.
     */
    @Test
    void theRowSaysWhenTheRequestWasReadAndWhenEachTokenWasWritten() throws Exception {
        Path file = dir.resolve("wire.jsonl");
        TruthLog log = TruthLog.open(file, TruthLog.DEFAULT_RING_CHARS);
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(8), 1)
                .faults(new FaultSettings(0, List.of(), 3, 1000, 300)).truthLog(log).build());
        JsonNode inBand;
        try {
            String body = """
                    {"prompt":"Once upon","max_tokens":6,"ignore_eos":true,"stream":true,"infersim":{"token_times":true}}""";
            TestServers.stream(server, "/v1/completions", body, "x-request-id", "on-time");
            TestServers.Stream held = TestServers.stream(server, "/v1/completions", body, "x-request-id", "held",
                    HttpBasics.FAULT_HEADER, "slow_first_token");
            inBand = held.events().get(held.events().size() - 2).json().get("infersim").get("choices").get(0).get("wall");
            assertTrue(TestServers.eventually(5, () -> log.written() == 2), "two rows written");
        } finally {
            TestServers.close(server);
            log.close();
        }
        List<String> lines = Files.readAllLines(file);
        for (String line : lines) {
            JsonNode row = Json.MAPPER.readTree(line);
            JsonNode wall = row.get("wall");
            double received = wall.get("received_ms").asDouble();
            double arrival = wall.get("arrival_ms").asDouble();
            assertTrue(received <= arrival, line);
            assertEquals(arrival - received, wall.get("ingest_ms").asDouble(), 1e-3, line);
            assertTrue(wall.get("received_lateness_ms").asDouble() >= 0, line); // this loop's own bound (Linux) // epoch ms as doubles: 0.25 µs apart
            JsonNode planned = wall.get("token_times_ms");
            JsonNode written = wall.get("token_written_ms");
            assertEquals(6, written.size(), line);
            double lateness = 0;
            for (int i = 0; i < 6; i++) {
                assertTrue(written.get(i).asDouble() >= planned.get(i).asDouble(), "token " + i + " written before it was made: " + line);
                assertTrue(i == 0 || written.get(i).asDouble() >= written.get(i - 1).asDouble(), line);
                lateness = Math.max(lateness, written.get(i).asDouble() - planned.get(i).asDouble());
            }
            assertEquals(lateness, wall.get("write_lateness_max_ms").asDouble(), 1e-3, line);
            assertEquals(written.get(0).asDouble(), wall.get("first_token_written_ms").asDouble(), 0, line);
            assertEquals(written.get(5).asDouble(), wall.get("last_token_written_ms").asDouble(), 0, line);
            double firstLate = written.get(0).asDouble() - wall.get("first_token_ms").asDouble();
            if (row.get("request_id").asText().equals("held")) {
                assertTrue(firstLate >= 300, "the held first token went out " + firstLate + " ms after it was made");
                assertEquals(inBand, wall, "the last chunk's ground truth is the row's");
            } else {
                assertTrue(firstLate < 300, line);
            }
        }
    }

    @Test
    void theRingKeepsTheNewestRowsAndSaysHowManyWereMissed() throws Exception {
        Path file = dir.resolve("ring.jsonl");
        TruthLog log = TruthLog.open(file, 1);
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).truthLog(log).build());
        try {
            for (int i = 0; i < 3; i++) {
                TestServers.post(server, "/v1/completions", """
                        {"prompt":"Once","max_tokens":2,"ignore_eos":true}""");
            }
            assertTrue(TestServers.eventually(5, () -> log.written() == 3), "three rows written");
            TruthLog.Page page = log.since(0, 10);
            assertEquals(1, page.rows());
            assertEquals(3, page.next());
            assertEquals(2, page.missed());
            assertEquals(0, log.since(3, 10).rows());
            assertEquals(3, log.since(3, 10).next());
        } finally {
            TestServers.close(server);
            log.close();
        }
        assertEquals(3, Files.readAllLines(file).size());
    }

    @Test
    void aSizeCapRotatesTheFileKeepingTheNewestRowsInTheBackups() throws Exception {
        Path file = dir.resolve("rotated.jsonl");
        TruthLog log = TruthLog.open(file, TruthLog.DEFAULT_RING_CHARS, new TruthLog.Rotation(300, 2));
        for (int i = 0; i < 40; i++) {
            log.offer((g, seq) -> {
                g.writeStartObject();
                g.writeNumberField("seq", seq);
                g.writeStringField("pad", "x".repeat(40));
                g.writeEndObject();
            });
        }
        assertTrue(TestServers.eventually(5, () -> log.written() == 40), "forty rows written");
        log.close();
        List<Long> seqs = new ArrayList<>();
        for (Path p : List.of(dir.resolve("rotated.jsonl.2"), dir.resolve("rotated.jsonl.1"), file)) {
            assertTrue(Files.size(p) <= 300, p + " holds " + Files.size(p) + " bytes");
            for (String line : Files.readAllLines(p)) {
                seqs.add(Json.MAPPER.readTree(line).get("seq").asLong());
            }
        }
        assertTrue(!Files.exists(dir.resolve("rotated.jsonl.3")), "two backups kept");
        assertEquals(40L, seqs.get(seqs.size() - 1));
        for (int i = 1; i < seqs.size(); i++) {
            assertEquals(seqs.get(i - 1) + 1, seqs.get(i), "the newest rows, in order, none lost: " + seqs);
        }
        assertEquals(0, log.dropped());
    }

    private static JsonNode choiceOf(JsonNode infersim, int index) {
        for (JsonNode c : infersim.get("choices")) {
            if (c.get("index").asInt() == index) {
                return c;
            }
        }
        throw new AssertionError("no choice " + index + " in " + infersim);
    }

    /** The row without the request-level fields, which is the shape of a choice in the response's ground truth. */
    private static ObjectNode rowChoice(JsonNode row) {
        ObjectNode c = row.deepCopy();
        c.remove(List.of("seq", "request_id", "replica", "engine", "lora", "time_scale", "attempt",
                "output_text_sha256",
                "prompt_sha256"));
        return c;
    }
}
