package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.FixedTiming;
import dev.infersim.server.fleet.MockFleet;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.observe.TruthLog;
import io.vertx.core.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code GET/POST /admin/config}: the run-time settings read and changed whole, a bad field refused by name with nothing
 * changed, llm-d-inference-sim's names read as its own, the change in /metrics and in the engine's next requests (model
 * time, so exact whatever the wall clock does), and a fleet's replica changed from its first port.
 */
class AdminConfigTest {
    private static final String[] AUTH = {"authorization", "Bearer k"};

    private static MockServer fixed(TruthLog log) throws Exception {
        return TestServers.start(TestServers.options(TestServers.llama8b(8), 50).apiKey("k")
                .fixedTiming(FixedTiming.of(50, 10)).truthLog(log).build());
    }

    private static JsonNode post(MockServer s, String body) throws Exception {
        TestServers.Reply r = TestServers.post(s, "/admin/config", body, AUTH);
        assertEquals(200, r.status(), r.raw().body());
        return r.json();
    }

    private static JsonNode refused(MockServer s, String body, String param) throws Exception {
        TestServers.Reply r = TestServers.post(s, "/admin/config", body, AUTH);
        assertEquals(400, r.status(), r.raw().body());
        JsonNode error = r.json().get("error");
        assertEquals(param, error.get("param").asText(), error.toString());
        return error;
    }

    @Test
    void postChangesTheSettingsWholeAndARefusedUpdateChangesNothing(@TempDir Path dir) throws Exception {
        MockServer s = fixed(TruthLog.open(dir.resolve("t.jsonl"), TruthLog.DEFAULT_RING_CHARS));
        try {
            assertEquals(401, TestServers.get(s, "/admin/config").status());
            JsonNode start = TestServers.get(s, "/admin/config", AUTH).json();
            assertEquals(50.0, start.get("time_to_first_token_ms").asDouble());
            assertEquals(1.0, start.get("speed_factor").asDouble());
            assertTrue(start.get("fake_metrics").isNull());
            assertEquals(0, start.get("replica").asInt());

            JsonNode now = post(s, "{\"time_to_first_token_ms\": 200, \"speed_factor\": 2, \"failure_rate\": 0}");
            assertEquals(200.0, now.get("time_to_first_token_ms").asDouble());
            assertEquals(2.0, now.get("speed_factor").asDouble());

            // one bad field among good ones: 400 naming it, and none of them applied
            refused(s, "{\"time_to_first_token_ms\": 300, \"failure_rate\": 3}", "failure_rate");
            refused(s, "{\"inter_token_latency_ms\": 5, \"speed_factor\": 0}", "speed_factor");
            JsonNode unknown = refused(s, "{\"ttft\": 5}", "ttft");
            assertTrue(unknown.get("message").asText().contains("known: failure_rate"), unknown.toString());
            refused(s, "{\"time_to_first_token_ms\": -1}", "time_to_first_token_ms");
            JsonNode after = TestServers.get(s, "/admin/config", AUTH).json();
            assertEquals(200.0, after.get("time_to_first_token_ms").asDouble(), "the refused updates changed nothing");
            assertEquals(10.0, after.get("inter_token_latency_ms").asDouble());
            assertEquals(2.0, after.get("speed_factor").asDouble());

            String metrics = TestServers.get(s, "/metrics").raw().body();
            assertTrue(metrics.contains("infersim:config_changes_total{replica=\"0\"} 1\n"), metrics);
            assertTrue(metrics.contains("infersim:config_speed_factor{replica=\"0\"} 2.0\n"), metrics);
            assertTrue(metrics.contains("infersim:config_time_to_first_token_ms{replica=\"0\"} 200.0\n"), metrics);
        } finally {
            TestServers.close(s);
        }
    }

    @Test
    void theNextRequestsRunAtTheNewLatencyInModelTime(@TempDir Path dir) throws Exception {
        TruthLog log = TruthLog.open(dir.resolve("t.jsonl"), TruthLog.DEFAULT_RING_CHARS);
        MockServer s = fixed(log);
        String body = "{\"prompt\": \"Hi\", \"max_tokens\": 3, \"ignore_eos\": true}";
        try {
            TestServers.post(s, "/v1/completions", body, AUTH[0], AUTH[1], "x-request-id", "before");
            post(s, "{\"time_to_first_token_ms\": 300, \"inter_token_latency_ms\": 40}");
            TestServers.post(s, "/v1/completions", body, AUTH[0], AUTH[1], "x-request-id", "after");
            post(s, "{\"speed_factor\": 0.5}");
            TestServers.post(s, "/v1/completions", body, AUTH[0], AUTH[1], "x-request-id", "slower");
            assertTrue(TestServers.eventually(10, () -> log.written() == 3));
        } finally {
            TestServers.close(s);
            log.close();
        }
        java.util.Map<String, JsonNode> rows = new java.util.HashMap<>();
        for (String line : java.nio.file.Files.readAllLines(dir.resolve("t.jsonl"))) {
            JsonNode r = Json.MAPPER.readTree(line);
            rows.put(r.get("request_id").asText(), r.get("model"));
        }
        // model time: TTFT from scheduling to the first token, then the gaps; exact under fixed timing without jitter
        assertTimeline(rows.get("before"), 50, 10);
        assertTimeline(rows.get("after"), 300, 40);
        assertTimeline(rows.get("slower"), 600, 80);
    }

    private static void assertTimeline(JsonNode model, double ttftMs, double itlMs) {
        assertEquals(ttftMs, model.get("prefill_time_ms").asDouble(), 1e-6, model.toString());
        assertEquals(2 * itlMs, model.get("decode_time_ms").asDouble(), 1e-6, model.toString());
    }

    @Test
    void llmdInferenceSimsNamesAndDurationsAreReadAsItsOwn(@TempDir Path dir) throws Exception {
        MockServer s = fixed(null);
        try {
            JsonNode now = post(s, "{\"failure-injection-rate\": 100, \"failure-types\": [\"invalid_api_key\"], "
                    + "\"time-to-first-token\": \"250ms\", \"inter-token-latency\": \"1.5s\"}");
            assertEquals(1.0, now.get("failure_rate").asDouble());
            assertEquals("auth", now.get("failure_types").get(0).asText());
            assertEquals(250.0, now.get("time_to_first_token_ms").asDouble());
            assertEquals(1500.0, now.get("inter_token_latency_ms").asDouble());
            refused(s, "{\"time-to-first-token\": \"fast\"}", "time-to-first-token");
            refused(s, "{\"failure-types\": [\"model_not_found\"]}", "failure-types");
            post(s, "{\"failure-injection-rate\": 0}");
        } finally {
            TestServers.close(s);
        }
    }

    @Test
    void aCostModelServerChangesItsSpeedNotFixedLatencies() throws Exception {
        MockServer s = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).apiKey("k").build());
        try {
            JsonNode error = refused(s, "{\"time_to_first_token_ms\": 100}", "time_to_first_token_ms");
            assertTrue(error.get("message").asText().contains("speed_factor"), error.toString());
            assertEquals(0.25, post(s, "{\"speed_factor\": 0.25}").get("speed_factor").asDouble());
            assertTrue(!TestServers.get(s, "/admin/config", AUTH).json().has("time_to_first_token_ms"));
        } finally {
            TestServers.close(s);
        }
    }

    @Test
    void fakeMetricsAreSetUpdatedFieldByFieldAndTurnedOff() throws Exception {
        MockServer s = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).apiKey("k").build());
        try {
            post(s, "{\"fake_metrics\": {\"running-requests\": 7, \"kv-cache-usage\": 0.5}}");
            post(s, "{\"fake-metrics\": {\"waiting-requests\": 3, \"running-requests\": null}}");
            String metrics = TestServers.get(s, "/metrics").raw().body();
            assertTrue(metrics.contains("vllm:num_requests_running{engine=\"0\",model_name=\"llama-3.1-8b\"} 7.0"), metrics);
            assertTrue(metrics.contains("vllm:num_requests_waiting{engine=\"0\",model_name=\"llama-3.1-8b\"} 3.0"), metrics);
            assertTrue(metrics.contains("infersim:config_fake_metrics{replica=\"0\"} 1"), metrics);
            refused(s, "{\"fake_metrics\": {\"kv-cache-usage\": -1}}", "fake_metrics");
            post(s, "{\"fake_metrics\": null}");
            metrics = TestServers.get(s, "/metrics").raw().body();
            assertTrue(metrics.contains("vllm:num_requests_running{engine=\"0\",model_name=\"llama-3.1-8b\"} 0.0"), metrics);
        } finally {
            TestServers.close(s);
        }
    }

    @Test
    void aFleetsFirstPortChangesAnyReplicaByIndex() throws Exception {
        MockFleet fleet = MockFleet.start(TestServers.options(TestServers.llama8b(8), 50).apiKey("k").build(), 2,
                Duration.ofSeconds(1), r -> { }).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        try {
            MockServer first = fleet.replicas().get(0);
            MockServer second = fleet.replicas().get(1);
            JsonNode changed = TestServers.post(first, "/admin/config?replica=1", "{\"speed_factor\": 0.5}", AUTH).json();
            assertEquals(1, changed.get("replica").asInt());
            assertEquals(0.5, TestServers.get(second, "/admin/config", AUTH).json().get("speed_factor").asDouble());
            assertEquals(1.0, TestServers.get(first, "/admin/config", AUTH).json().get("speed_factor").asDouble());
            assertEquals(404, TestServers.post(first, "/admin/config?replica=7", "{}", AUTH).status());
            assertEquals(404, TestServers.post(second, "/admin/config?replica=0", "{}", AUTH).status(),
                    "only the first port knows the fleet");
        } finally {
            Future<Void> closed = fleet.close(Duration.ZERO);
            closed.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
