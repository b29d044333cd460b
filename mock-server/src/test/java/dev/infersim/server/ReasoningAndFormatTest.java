package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.json.Json;
import dev.infersim.server.output.JsonSchemaSamplerTest;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** --reasoning-parser puts the reasoning first, in vLLM's fields; response_format yields JSON that fits the schema. */
class ReasoningAndFormatTest {
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(64), 50)
            .features(ModelFeatures.NONE.withReasoning("qwen3", 0.5)).build());

    private static final String ASK = "{\"model\":\"llama-3.1-8b\",\"messages\":[{\"role\":\"user\",\"content\":\"Think.\"}],"
            + "\"ignore_eos\":true,\"max_tokens\":20";

    @Test
    void aReplyThinksFirstForItsShareOfTheOutputAndUsageCountsEveryToken() throws Exception {
        JsonNode r = TestServers.post(SERVER.get(), "/v1/chat/completions", ASK + "}").json();
        JsonNode message = r.path("choices").path(0).path("message");
        PromptTokenizer tok = new PromptTokenizer();
        // 20 tokens: <think>, 8 reasoning tokens (half the output less the two markers), </think>, 10 content tokens
        assertEquals(8, tok.encode(message.get("reasoning").asText()).length, message.toString());
        assertEquals(10, tok.encode(message.get("content").asText()).length, message.toString());
        assertEquals(20, r.path("usage").path("completion_tokens").asInt());
        assertFalse(message.toString().contains("think>"), "the parser strips the markers");
    }

    @Test
    void aStreamSendsReasoningDeltasThenContentDeltas() throws Exception {
        TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/chat/completions", ASK + ",\"stream\":true}");
        List<String> kinds = new ArrayList<>();
        for (TestServers.Event e : s.events()) {
            if (e.data().equals("[DONE]")) {
                continue;
            }
            JsonNode delta = e.json().path("choices").path(0).path("delta");
            if (delta.has("reasoning")) {
                kinds.add("r");
            } else if (delta.has("content") && !delta.has("role") && !delta.get("content").asText().isEmpty()) {
                kinds.add("c");
            }
        }
        assertEquals("rrrrrrrrcccccccccc", String.join("", kinds));
    }

    @Test
    void includeReasoningFalseLeavesItOut() throws Exception {
        JsonNode r = TestServers.post(SERVER.get(), "/v1/chat/completions", ASK + ",\"include_reasoning\":false}").json();
        assertTrue(r.path("choices").path(0).path("message").get("reasoning").isNull());
        assertEquals(20, r.path("usage").path("completion_tokens").asInt());
    }

    @Test
    void jsonSchemaResponseFormatGivesContentThatValidates() throws Exception {
        String schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"age\":{\"type\":\"integer\","
                + "\"minimum\":0,\"maximum\":120},\"email\":{\"type\":\"string\",\"format\":\"email\"}},"
                + "\"required\":[\"name\",\"age\",\"email\"],\"additionalProperties\":false}";
        for (int seed = 0; seed < 5; seed++) {
            JsonNode r = TestServers.post(SERVER.get(), "/v1/chat/completions", "{\"model\":\"llama-3.1-8b\",\"seed\":" + seed
                    + ",\"messages\":[{\"role\":\"user\",\"content\":\"Who?\"}],\"response_format\":{\"type\":\"json_schema\","
                    + "\"json_schema\":{\"name\":\"person\",\"schema\":" + schema + "}}}").json();
            JsonNode choice = r.path("choices").path(0);
            String content = choice.path("message").get("content").asText();
            assertTrue(JsonSchemaSamplerTest.validate(schema, content).isEmpty(), content);
            assertEquals("stop", choice.get("finish_reason").asText(), "the model ends its reply with the value");
            assertFalse(choice.path("message").get("reasoning").asText().isEmpty(), "a reasoning model still thinks first");
        }
    }

    @Test
    void jsonObjectResponseFormatGivesAnObject() throws Exception {
        JsonNode r = TestServers.post(SERVER.get(), "/v1/chat/completions", "{\"model\":\"llama-3.1-8b\",\"messages\":[{\"role\":"
                + "\"user\",\"content\":\"JSON please\"}],\"response_format\":{\"type\":\"json_object\"}}").json();
        assertTrue(Json.MAPPER.readTree(r.path("choices").path(0).path("message").get("content").asText()).isObject());
    }

    @Test
    void aSchemaTheGeneratorCannotSatisfyIsA400NamingIt() throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), "/v1/chat/completions", "{\"model\":\"llama-3.1-8b\",\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":"
                + "\"n\",\"schema\":{\"type\":\"string\",\"pattern\":\"(?=x)y\"}}}}");
        assertEquals(400, r.status());
        assertEquals("response_format", r.json().path("error").path("param").asText());
    }
}
