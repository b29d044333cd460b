package dev.infersim.server.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.TestServers;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** vLLM's sleep mode: a sleeping engine schedules nothing; waking up costs the weights' reload, in model time. */
class SleepModeTest {
    private static final String ASK = "{\"model\":\"llama-3.1-8b\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
            + "\"max_tokens\":3,\"ignore_eos\":true}";

    @Test
    void aRequestArrivingWhileAsleepWaitsForTheWakeUpAndTheReload() throws Exception {
        MockServer s = TestServers.start(TestServers.options(TestServers.llama8b(8), 20)
                .features(ModelFeatures.NONE.withSleepMode(true, true, 3.4)).build());
        try {
            assertFalse(TestServers.get(s, "/is_sleeping").json().get("is_sleeping").asBoolean());
            assertEquals(200, TestServers.post(s, "/sleep?level=1", "").status());
            assertTrue(TestServers.get(s, "/is_sleeping").json().get("is_sleeping").asBoolean());
            CompletableFuture<JsonNode> reply = CompletableFuture.supplyAsync(() -> {
                try {
                    return TestServers.post(s, "/v1/chat/completions", ASK).json();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertTrue(TestServers.eventually(10, () -> s.waitingRequests() == 1), "the request waits in the queue");
            assertEquals(200, TestServers.post(s, "/wake_up", "").status());
            assertFalse(TestServers.get(s, "/is_sleeping").json().get("is_sleeping").asBoolean());
            JsonNode model = reply.get().path("infersim").path("choices").path(0).path("model");
            double reloadMs = SleepMode.reloadNanos(TestServers.llama8b(8), 1, 3.4) / 1e6;
            assertTrue(reloadMs > 100, "16 GB of weights over the host link: " + reloadMs + " ms");
            assertTrue(model.get("queue_time_ms").asDouble() >= reloadMs, model.toString());
        } finally {
            TestServers.close(s);
        }
    }

    @Test
    void level2ReloadsFromStorageAndTheRoutesNeedDevMode() throws Exception {
        assertTrue(SleepMode.reloadNanos(TestServers.llama8b(8), 2, 3.4) > 10 * SleepMode.reloadNanos(TestServers.llama8b(8), 1, 3.4));
        MockServer s = TestServers.start(TestServers.options(TestServers.llama8b(8), 20)
                .features(ModelFeatures.NONE.withSleepMode(true, false, 3.4)).build());
        try {
            assertEquals(404, TestServers.post(s, "/sleep", "").status());
        } finally {
            TestServers.close(s);
        }
    }
}
