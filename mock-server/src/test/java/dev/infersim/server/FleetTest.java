package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.StartupDelay;
import dev.infersim.server.config.PodIdentity;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockFleet;
import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --replicas}, cold starts and {@code /admin/replicas}: replicas name themselves, load, grow and drain. */
class FleetTest {
    private static final String SHORT = "{\"prompt\":\"hi\",\"max_tokens\":2,\"ignore_eos\":true}";
    private MockFleet fleet;

    @AfterEach
    void stop() throws Exception {
        if (fleet != null) {
            fleet.close(Duration.ofSeconds(5)).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private MockFleet start(ServerOptions options, int replicas) throws Exception {
        return start(options, replicas, s -> { });
    }

    private MockFleet start(ServerOptions options, int replicas, Consumer<MockServer> onLoaded) throws Exception {
        fleet = MockFleet.start(options, replicas, Duration.ofSeconds(10), onLoaded)
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        return fleet;
    }

    private static void awaitLoaded(MockServer s) throws Exception {
        s.loaded().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void replicaIListensOnPortPlusIAndNamesItselfInHeaderAndGroundTruth() throws Exception {
        int port = FreePorts.consecutive(3);
        start(TestServers.options(TestServers.llama8b(8), 50).port(port).build(), 3);
        for (int i = 0; i < 3; i++) {
            MockServer replica = fleet.replicas().get(i);
            assertEquals(port + i, replica.port());
            TestServers.Reply r = TestServers.post(replica, "/v1/completions", SHORT);
            assertEquals(200, r.status(), r.raw().body());
            assertEquals(String.valueOf(i), r.header("x-infersim-replica"));
            assertEquals(i, r.json().path("infersim").path("replica").asInt(-1));
            assertTrue(replica.readyLine().contains("(replica " + i + ", "), replica.readyLine());
        }
    }

    @Test
    void aLoadingReplicaRefusesConnectionsAsVllmDoesUntilItsColdStartEnds() throws Exception {
        // 60 model seconds at time scale 30: 2 s of wall time
        CompletableFuture<MockServer.State> toldLoaded = new CompletableFuture<>();
        int port = FreePorts.one();
        start(TestServers.options(TestServers.llama8b(8), 30).port(port).startupDelay(StartupDelay.ofSeconds(60))
                .pod(new PodIdentity("vllm-0", "team-a", null)).build(), 1, s -> toldLoaded.complete(s.state()));
        MockServer replica = fleet.replicas().get(0);
        assertEquals(MockServer.State.LOADING, replica.state());
        assertEquals(port, replica.port());
        assertThrows(ConnectException.class, () -> TestServers.get(replica, "/health"), "nothing listens yet");
        assertTrue(!toldLoaded.isDone());
        awaitLoaded(replica);
        assertEquals(MockServer.State.READY, toldLoaded.get(10, TimeUnit.SECONDS));
        TestServers.Reply health = TestServers.get(replica, "/health");
        assertEquals(200, health.status());
        assertEquals(200, TestServers.get(replica, "/health/ready").status());
        assertEquals("vllm-0", health.header("x-inference-pod"), "llm-d-inference-sim's headers");
        assertEquals(Integer.toString(port), health.header("x-inference-port"));
        assertEquals("team-a", health.header("x-inference-namespace"));
    }

    @Test
    void withListenWhileLoadingALoadingReplicaAnswers503UntilItsColdStartEnds() throws Exception {
        // 60 model seconds at time scale 30: 2 s of wall time, ample for the checks below on a busy machine.
        CompletableFuture<MockServer.State> toldLoaded = new CompletableFuture<>(); // where serve prints the ready line
        start(TestServers.options(TestServers.llama8b(8), 30).startupDelay(StartupDelay.ofSeconds(60))
                .listenWhileLoading(true).build(), 1, s -> toldLoaded.complete(s.state()));
        MockServer replica = fleet.replicas().get(0);
        assertEquals(MockServer.State.LOADING, replica.state());
        assertTrue(!toldLoaded.isDone(), "the ready line waits for the model to load");
        assertEquals(503, TestServers.get(replica, "/health").status());
        assertEquals(503, TestServers.get(replica, "/health/ready").status(), "llm-d-inference-sim's readiness route");
        TestServers.Reply refused = TestServers.post(replica, "/v1/completions", SHORT);
        assertEquals(503, refused.status());
        assertTrue(refused.json().path("error").path("message").asText().contains("loading"), refused.raw().body());
        assertEquals(503, TestServers.get(replica, "/v1/models").status());
        String metrics = TestServers.get(replica, "/metrics").raw().body();
        assertTrue(metrics.contains("vllm:num_requests_running{engine=\"0\",model_name=\"llama-3.1-8b\"} 0.0"), metrics);
        assertTrue(metrics.contains("vllm:generation_tokens_total{engine=\"0\",model_name=\"llama-3.1-8b\"} 0.0"), metrics);

        awaitLoaded(replica);
        assertEquals(MockServer.State.READY, replica.state());
        assertEquals(MockServer.State.READY, toldLoaded.get(10, TimeUnit.SECONDS));
        assertEquals(200, TestServers.get(replica, "/health").status());
        assertEquals(200, TestServers.post(replica, "/v1/completions", SHORT).status());
        assertTrue(replica.readyLine().contains("loaded in 60.0 s"), replica.readyLine());
    }

    @Test
    void adminReplicasGrowsWithColdStartsAndShrinksByDraining() throws Exception {
        start(TestServers.options(TestServers.llama8b(8), 20).apiKey("k").startupDelay(StartupDelay.ofSeconds(40))
                .listenWhileLoading(true).build(), 1);
        MockServer first = fleet.replicas().get(0);
        awaitLoaded(first);
        String[] key = {"authorization", "Bearer k"};
        assertEquals(401, TestServers.get(first, "/admin/replicas").status());
        assertEquals(401, TestServers.post(first, "/admin/replicas", "{\"replicas\":2}").status());

        JsonNode grown = TestServers.post(first, "/admin/replicas", "{\"replicas\":3}", key).json();
        assertEquals(3, grown.path("replicas").asInt());
        assertEquals("loading", grown.path("endpoints").get(2).path("state").asText());
        assertEquals(2, grown.path("loading").asInt());
        MockServer third = fleet.replicas().get(2);
        assertEquals(503, TestServers.get(third, "/health").status());
        awaitLoaded(third);
        assertEquals(3, TestServers.get(first, "/admin/replicas", key).json().path("ready").asInt());

        // A long stream (about 2 s of wall time) in flight on replica 2 finishes after the fleet shrinks; new requests
        // there are refused meanwhile.
        CompletableFuture<TestServers.Stream> inFlight = CompletableFuture.supplyAsync(() -> {
            try {
                return TestServers.stream(third, "/v1/completions",
                        "{\"prompt\":\"hi\",\"max_tokens\":6000,\"ignore_eos\":true,\"stream\":true}", key);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(TestServers.eventually(10, () -> third.runningRequests() == 1));
        JsonNode shrunk = TestServers.post(first, "/admin/replicas", "{\"replicas\":1}", key).json();
        assertEquals(1, shrunk.path("replicas").asInt());
        assertEquals(2, shrunk.path("draining").asInt());
        assertEquals(503, TestServers.post(third, "/v1/completions", SHORT, key).status());
        assertEquals(503, TestServers.get(third, "/health").status());

        TestServers.Stream stream = inFlight.get(30, TimeUnit.SECONDS);
        assertEquals("[DONE]", stream.events().get(stream.events().size() - 1).data());
        JsonNode last = stream.events().get(stream.events().size() - 2).json();
        assertEquals(6000, last.path("infersim").path("choices").get(0).path("completion_tokens").asInt());
        assertTrue(TestServers.eventually(10, () -> {
            try {
                return TestServers.get(first, "/admin/replicas", key).json().path("draining").asInt() == 0;
            } catch (Exception e) {
                return false;
            }
        }));
        assertThrows(ConnectException.class, () -> TestServers.get(third, "/health"));
    }

    @Test
    void adminReplicasRejectsBadBodiesWithOpenAiErrors() throws Exception {
        start(TestServers.options(TestServers.llama8b(8), 20).build(), 1);
        MockServer first = fleet.replicas().get(0);
        for (String body : new String[] {"{\"replicas\":0}", "{\"replicas\":\"two\"}", "{}", "{\"replica\":2}", "[2]",
                "{\"replicas\":65}"}) {
            TestServers.Reply r = TestServers.post(first, "/admin/replicas", body);
            assertEquals(400, r.status(), body);
            assertEquals("BadRequestError", r.json().path("error").path("type").asText(), body);
        }
        assertEquals(1, TestServers.get(first, "/admin/replicas").json().path("replicas").asInt());
    }

    @Test
    void aResizeOntoATakenPortIsRefusedWith409AndChangesNothing() throws Exception {
        int port = FreePorts.consecutive(3);
        start(TestServers.options(TestServers.llama8b(8), 20).port(port).build(), 1);
        MockServer first = fleet.replicas().get(0);
        TestServers.Reply refused;
        try (java.net.ServerSocket taken = new java.net.ServerSocket(port + 2)) {
            refused = TestServers.post(first, "/admin/replicas", "{\"replicas\":3}");
        }
        assertEquals(409, refused.status(), refused.raw().body());
        assertTrue(refused.json().at("/error/message").asText().contains("port " + (port + 2)), refused.raw().body());
        assertEquals(1, TestServers.get(first, "/admin/replicas").json().path("replicas").asInt());
        assertEquals(1, fleet.replicas().size());
        assertTrue(TestServers.eventually(10, () -> {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port + 1)) {
                return false;
            } catch (java.io.IOException e) {
                return true;
            }
        }), "the replica started for the refused change closed again");
        // with the port free again, the same change goes through whole
        assertEquals(200, TestServers.post(first, "/admin/replicas", "{\"replicas\":3}").status());
        assertEquals(3, fleet.replicas().size());
    }

    @Test
    void onlyTheFirstReplicaHostsTheAdminRoute() throws Exception {
        start(TestServers.options(TestServers.llama8b(8), 20).build(), 2);
        assertEquals(404, TestServers.get(fleet.replicas().get(1), "/admin/replicas").status());
        assertNull(TestServers.get(fleet.replicas().get(0), "/admin/replicas").json().get("error"));
    }
}
