package dev.infersim.server.http;

import dev.infersim.server.TestServers;
import dev.infersim.server.fleet.MockFleet;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.server.routes.HttpBasics;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every attempt of a client request is counted, across a fleet's replicas, and each answer says its number. */
class AttemptsTest {
    private static final long S = 1_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void aRequestIsKnownByItsIdOrElseByItsRouteAndBody() {
        Buffer body = Buffer.buffer("{\"prompt\":\"a\"}");
        assertEquals("id:r-1", Attempts.key("r-1", "/v1/completions", body));
        String fingerprint = Attempts.key(null, "/v1/completions", body);
        assertEquals(fingerprint, Attempts.key(" ", "/v1/completions", Buffer.buffer("{\"prompt\":\"a\"}")));
        assertNotEquals(fingerprint, Attempts.key(null, "/v1/chat/completions", body));
        assertNotEquals(fingerprint, Attempts.key(null, "/v1/completions", Buffer.buffer("{\"prompt\":\"b\"}")));
    }

    @Test
    void attemptsCountWhileTheRequestIsRememberedAndStartAgainAfter() {
        Attempts a = new Attempts();
        assertEquals(1, a.count("id:x", 0));
        assertEquals(1, a.count("id:y", 1));
        assertEquals(2, a.count("id:x", 10 * S));
        assertEquals(3, a.count("id:x", (10 + Attempts.KEPT_SECONDS) * S), "remembered from its last attempt");
        assertEquals(1, a.count("id:x", (11 + 2 * Attempts.KEPT_SECONDS) * S), "forgotten after that");
        assertEquals(1, a.count("id:y", (11 + 2 * Attempts.KEPT_SECONDS) * S));
    }

    @Test
    void atMostKeptRequestsAreRemembered() {
        Attempts a = new Attempts();
        for (int i = 0; i <= Attempts.KEPT; i++) {
            a.count("id:" + i, i);
        }
        assertEquals(1, a.count("id:0", Attempts.KEPT + 1), "the oldest was forgotten");
        assertEquals(2, a.count("id:" + Attempts.KEPT, Attempts.KEPT + 2));
    }

    /**
     * Replica 0 refuses a request with a 429, as a gateway's first choice would; the retry at replica 1 succeeds and
     * says it was the second attempt, in its header and in its truth-log row.
     */
    @Test
    void aRetryOnAnotherReplicaOfTheFleetIsTheSecondAttempt() throws Exception {
        Path file = dir.resolve("truth.jsonl");
        TruthLog log = TruthLog.open(file, TruthLog.DEFAULT_RING_CHARS);
        MockFleet fleet = MockFleet.start(TestServers.options(TestServers.llama8b(4), 50).eventLoops(1).truthLog(log).build(),
                2, Duration.ZERO, s -> { }).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        try {
            List<MockServer> replicas = fleet.replicas();
            String body = "{\"prompt\":\"Once\",\"max_tokens\":2,\"ignore_eos\":true}";
            TestServers.Reply refused = TestServers.post(replicas.get(0), "/v1/completions", body, "x-request-id", "retried",
                    HttpBasics.FAULT_HEADER, "rate_limit");
            assertEquals(429, refused.status());
            assertEquals("1", refused.raw().headers().firstValue(Attempts.HEADER).orElse(null));
            TestServers.Reply retried = TestServers.post(replicas.get(1), "/v1/completions", body, "x-request-id", "retried");
            assertEquals(200, retried.status());
            assertEquals("2", retried.raw().headers().firstValue(Attempts.HEADER).orElse(null));
            assertEquals(2, retried.json().get("infersim").get("attempt").asInt());
            TestServers.Reply other = TestServers.post(replicas.get(1), "/v1/completions", body, "x-request-id", "once");
            assertEquals(1, other.json().get("infersim").get("attempt").asInt());
            assertTrue(TestServers.eventually(5, () -> log.written() == 2), "two rows");
        } finally {
            fleet.close(Duration.ZERO).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            log.close();
        }
        List<String> rows = Files.readAllLines(file);
        assertTrue(rows.stream().anyMatch(r -> r.contains("\"request_id\":\"retried\"") && r.contains("\"attempt\":2")), rows.toString());
        assertTrue(rows.stream().anyMatch(r -> r.contains("\"request_id\":\"once\"") && r.contains("\"attempt\":1")), rows.toString());
    }
}
