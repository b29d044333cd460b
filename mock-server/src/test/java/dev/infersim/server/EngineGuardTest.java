package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.server.config.FaultSettings;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.server.routes.HttpBasics;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine thread never dies of one request: what it does for a request is guarded, and an exception there (planted
 * with the {@code engine_error} fault) fails that request only: its client gets a 500, or an error event where its
 * stream has begun, its truth row finish_reason {@code error}, and the next request is served. An exception in the
 * engine model's own step (planted in a cost model) stops the engine: what it held fails, later requests get 500 at
 * once and {@code /health} answers 503, as vLLM's does once its EngineCore is dead.
 */
class EngineGuardTest {
    private static final String STREAM = "{\"prompt\":\"hi\",\"max_tokens\":24,\"ignore_eos\":true,\"stream\":true}";
    private static final String WHOLE = "{\"prompt\":\"hi\",\"max_tokens\":24,\"ignore_eos\":true}";
    /** The engine fault strikes at the 21st token: at time scale 0.1, 1.3 s after the first has gone out. */
    private static final FaultSettings AFTER_20 = new FaultSettings(0, List.of(), 20, 1000, 2000);

    @TempDir
    Path dir;

    @Test
    void anExceptionInOneRequestsWorkFailsThatRequestAndTheEngineServesOn() throws Exception {
        Path file = dir.resolve("truth.jsonl");
        TruthLog log = TruthLog.open(file, TruthLog.DEFAULT_RING_CHARS);
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(8), 0.1).faults(AFTER_20).truthLog(log).build());
        try {
            TestServers.Stream stream = TestServers.stream(server, "/v1/completions", STREAM,
                    HttpBasics.FAULT_HEADER, "engine_error", "x-request-id", "failed-stream");
            assertEquals(200, stream.status(), "the stream had begun");
            List<TestServers.Event> events = stream.events();
            assertEquals("[DONE]", events.get(events.size() - 1).data());
            JsonNode error = events.get(events.size() - 2).json().get("error");
            assertEquals(500, error.get("code").asInt(), stream.body());
            assertEquals("Internal server error: the engine failed this request (injected fault)", error.get("message").asText());
            assertEquals(20, events.size() - 2, "the 20 tokens before the fault, then the error");

            TestServers.Reply whole = TestServers.post(server, "/v1/completions", WHOLE, HttpBasics.FAULT_HEADER, "engine_error",
                    "x-request-id", "failed-whole");
            assertEquals(500, whole.status(), whole.raw().body());
            assertTrue(whole.json().at("/error/message").asText().contains("(injected fault)"), whole.raw().body());

            assertEquals(200, TestServers.post(server, "/v1/completions", WHOLE).status(), "the next request is served");
            assertEquals(200, TestServers.get(server, "/health").status());
            assertTrue(TestServers.eventually(5, () -> log.written() == 3), "a truth row each");
        } finally {
            TestServers.close(server);
            log.close();
        }
        List<String> rows = Files.readAllLines(file);
        for (String id : List.of("failed-stream", "failed-whole")) {
            JsonNode row = rows.stream().map(EngineGuardTest::json).filter(r -> r.get("request_id").asText().equals(id))
                    .findFirst().orElseThrow();
            assertEquals("error", row.get("finish_reason").asText(), row.toString());
        }
    }

    @Test
    void anEngineThatStoppedFailsWhatItHeldRefusesTheRestAndIsUnhealthy() throws Exception {
        AtomicBoolean broken = new AtomicBoolean();
        RooflineCostModel roofline = new RooflineCostModel(TestServers.llama8b(8));
        Vertx vertx = Vertx.vertx();
        MockServer server = MockServer.start(vertx, TestServers.options(TestServers.llama8b(8), 10).build(), shape -> {
            if (broken.get()) {
                throw new IllegalStateException("planted cost model failure");
            }
            return roofline.stepNanos(shape);
        }).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        try {
            assertEquals(200, TestServers.post(server, "/v1/completions", WHOLE).status());
            CompletableFuture<TestServers.Reply> inFlight = CompletableFuture.supplyAsync(() -> {
                try {
                    return TestServers.post(server, "/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":2000,\"ignore_eos\":true}");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertTrue(TestServers.eventually(10, () -> server.runningRequests() == 1), "a request runs");
            broken.set(true);
            TestServers.Reply failed = inFlight.get(10, TimeUnit.SECONDS);
            assertEquals(500, failed.status(), failed.raw().body());
            assertTrue(failed.raw().body().contains("the engine has stopped"), failed.raw().body());
            TestServers.Reply health = TestServers.get(server, "/health");
            assertEquals(503, health.status());
            assertTrue(health.raw().body().contains("The engine has stopped"), health.raw().body());
            TestServers.Reply refused = TestServers.post(server, "/v1/completions", WHOLE);
            assertEquals(500, refused.status(), refused.raw().body());
        } finally {
            server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private static JsonNode json(String line) {
        try {
            return Json.MAPPER.readTree(line);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
