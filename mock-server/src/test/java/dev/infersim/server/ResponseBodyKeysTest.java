package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Non-stream bodies carry the keys vLLM's response models dump, in their order, unset ones as null: a client that
 * checks for a key (or a strict schema) must see the same object from the mock as from vLLM.
 */
class ResponseBodyKeysTest {
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(8), 1000).build());

    private static JsonNode post(String path, String body) throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), path, body);
        assertEquals(200, r.status(), r.raw().body());
        return r.json();
    }

    private static List<String> keys(JsonNode o) {
        List<String> names = new ArrayList<>();
        o.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static void assertNull(JsonNode o, String... names) {
        for (String name : names) {
            assertTrue(o.get(name).isNull(), name + " in " + o);
        }
    }

    @Test
    void chatBodyChoiceAndMessageHaveVllmsKeys() throws Exception {
        JsonNode body = post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2}");
        assertEquals(List.of("id", "object", "created", "model", "choices", "service_tier", "system_fingerprint", "usage",
                "prompt_logprobs", "prompt_token_ids", "kv_transfer_params", "infersim"), keys(body));
        assertNull(body, "service_tier", "system_fingerprint", "prompt_logprobs", "prompt_token_ids", "kv_transfer_params");
        JsonNode choice = body.at("/choices/0");
        assertEquals(List.of("index", "message", "logprobs", "finish_reason", "stop_reason"), keys(choice));
        JsonNode message = choice.get("message");
        assertEquals(List.of("role", "content", "refusal", "annotations", "audio", "function_call", "tool_calls",
                "reasoning"), keys(message));
        assertNull(message, "refusal", "annotations", "audio", "function_call", "reasoning");
        assertTrue(message.get("tool_calls").isArray() && message.get("tool_calls").isEmpty(), message.toString());
    }

    @Test
    void completionBodyAndChoiceHaveVllmsKeys() throws Exception {
        JsonNode body = post("/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":2}");
        assertEquals(List.of("id", "object", "created", "model", "choices", "usage", "kv_transfer_params", "infersim"),
                keys(body));
        assertNull(body, "kv_transfer_params");
        JsonNode choice = body.at("/choices/0");
        assertEquals(List.of("index", "text", "logprobs", "finish_reason", "stop_reason", "prompt_logprobs"), keys(choice));
        assertNull(choice, "logprobs", "prompt_logprobs");
    }
}
