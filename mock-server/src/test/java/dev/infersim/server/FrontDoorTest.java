package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.fleet.FrontDoor;
import dev.infersim.server.json.Json;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.sim.TieBreak;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The front door of {@code serve --replicas N --router NAME}: streams pass through, decisions reach the truth log. */
class FrontDoorTest {

    @Test
    void aStreamPassesThroughEventByEventAndTheDecisionIsInTheTruthLog(@TempDir Path dir) throws Exception {
        TruthLog log = TruthLog.open(dir.resolve("truth.jsonl"), TruthLog.DEFAULT_RING_CHARS);
        FrontDoor door = FrontDoor.start(TestServers.options(TestServers.llama8b(8), 20).truthLog(log).build(), 2,
                Duration.ofSeconds(5), s -> { }, "least-outstanding-requests", TieBreak.ROUND_ROBIN)
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        try {
            assertEquals(200, get(door, "/health").statusCode());
            JsonNode fleet = Json.MAPPER.readTree(get(door, "/admin/replicas").body());
            assertEquals(2, fleet.path("replicas").asInt());
            assertEquals("least-outstanding-requests", fleet.path("router").asText());

            HttpResponse<java.util.stream.Stream<String>> r = TestServers.http().send(HttpRequest.newBuilder(
                            URI.create(door.baseUrl() + "/v1/completions")).header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\": \"hi\", \"max_tokens\": 20, \"ignore_eos\": true, "
                            + "\"stream\": true}")).build(), HttpResponse.BodyHandlers.ofLines());
            assertEquals("text/event-stream", r.headers().firstValue("content-type").orElse("").split(";")[0]);
            List<String> events = r.body().filter(l -> l.startsWith("data: ")).toList();
            assertEquals(21, events.size(), "20 token chunks (the last with the ground truth), then [DONE]");
            assertEquals("data: [DONE]", events.get(20));

            for (int i = 0; i < 3; i++) {
                assertEquals(200, TestServers.http().send(HttpRequest.newBuilder(URI.create(door.baseUrl() + "/v1/completions"))
                        .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                                "{\"prompt\": \"hi\", \"max_tokens\": 2}")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            }
            assertTrue(TestServers.eventually(10, () -> log.written() == 4));
        } finally {
            door.close(Duration.ZERO).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            log.close();
        }
        List<String> rows = Files.readAllLines(dir.resolve("truth.jsonl"));
        assertEquals(4, rows.size());
        int[] perReplica = new int[2];
        for (String row : rows) {
            JsonNode route = Json.MAPPER.readTree(row).path("route");
            assertEquals("least-outstanding-requests", route.path("router").asText(), row);
            assertEquals(Json.MAPPER.readTree(row).path("replica").asInt(), route.path("replica").asInt());
            assertEquals(2, route.path("loads").size(), "the load of every ready replica when it was decided");
            perReplica[route.path("replica").asInt()]++;
        }
        assertEquals(2, perReplica[0], "idle replicas take turns, as nginx's least_conn: " + rows);
    }

    private static HttpResponse<String> get(FrontDoor door, String path) throws Exception {
        return TestServers.http().send(HttpRequest.newBuilder(URI.create(door.baseUrl() + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
