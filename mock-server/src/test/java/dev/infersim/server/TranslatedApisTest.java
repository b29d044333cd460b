package dev.infersim.server;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.JsonValue;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.ContentBlock;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.StopReason;
import com.anthropic.models.messages.Tool;
import com.anthropic.models.messages.ToolChoiceAny;
import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseStatus;
import com.openai.models.responses.ResponseStreamEvent;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.output.JsonSchemaSamplerTest;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Anthropic's Messages (through Anthropic's Java SDK) and OpenAI's Responses (through openai-java) on the mock, as vLLM
 * serves them: text, reasoning, tool calls, stream and not, usage counted as the engine generated.
 */
class TranslatedApisTest {
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(64), 50)
            .features(ModelFeatures.NONE.withTools("hermes", true, 1.0).withReasoning("deepseek_r1", 0.5)).build());
    private static AnthropicClient anthropic;
    private static OpenAIClient openai;

    @BeforeAll
    static void connect() {
        anthropic = AnthropicOkHttpClient.builder().baseUrl(SERVER.get().baseUrl()).apiKey("none").maxRetries(0).build();
        openai = TestServers.sdk(SERVER.get(), "none");
    }

    private static MessageCreateParams.Builder message(int maxTokens) {
        return MessageCreateParams.builder().model("llama-3.1-8b").maxTokens(maxTokens).system("Be brief.")
                .addUserMessage("Tell me about rivers");
    }

    @Test
    void messagesSdkGetsThinkingThenTextWithUsage() {
        Message m = anthropic.messages().create(message(20).build());
        assertEquals(StopReason.MAX_TOKENS, m.stopReason().orElseThrow());
        assertEquals(20, m.usage().outputTokens());
        assertTrue(m.usage().inputTokens() > 5);
        assertTrue(m.content().get(0).thinking().orElseThrow().thinking().length() > 0);
        assertTrue(m.content().get(1).text().orElseThrow().text().length() > 0);
        assertTrue(m.id().startsWith("chatcmpl-"), m.id());
    }

    @Test
    void messagesSdkStreamsTheSameReplyItGetsWhole() {
        Message whole = anthropic.messages().create(message(20).build());
        MessageAccumulator acc = MessageAccumulator.create();
        try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> s = anthropic.messages().createStreaming(message(20).build())) {
            s.stream().forEach(acc::accumulate);
        }
        Message streamed = acc.message();
        assertEquals(20, streamed.usage().outputTokens());
        assertEquals(StopReason.MAX_TOKENS, streamed.stopReason().orElseThrow());
        List<String> kinds = new ArrayList<>();
        for (ContentBlock b : streamed.content()) {
            kinds.add(b.isThinking() ? "thinking" : b.isText() ? "text" : "other");
        }
        assertEquals(List.of("thinking", "text"), kinds);
        // same request, same seed: same words (lorem from the request's sequence differs, so compare lengths in tokens)
        PromptTokenizer tok = new PromptTokenizer();
        assertEquals(tok.encode(whole.content().get(1).asText().text()).length, tok.encode(streamed.content().get(1).asText().text()).length);
    }

    @Test
    void messagesSdkGetsAToolUseBlockWhoseInputValidates() throws Exception {
        Map<String, Object> schema = Json.MAPPER.readValue(ToolCallsTest.WEATHER_SCHEMA, Map.class);
        Tool.InputSchema.Builder input = Tool.InputSchema.builder();
        schema.forEach((k, v) -> {
            if (!k.equals("type")) {
                input.putAdditionalProperty(k, JsonValue.from(v));
            }
        });
        MessageCreateParams params = message(400).addTool(Tool.builder().name("get_weather").inputSchema(input.build()).build())
                .toolChoice(ToolChoiceAny.builder().build()).build();
        Message m = anthropic.messages().create(params);
        assertEquals(StopReason.TOOL_USE, m.stopReason().orElseThrow());
        ContentBlock call = m.content().get(m.content().size() - 1);
        String args = Json.MAPPER.writeValueAsString(call.toolUse().orElseThrow()._input());
        assertTrue(JsonSchemaSamplerTest.validate(ToolCallsTest.WEATHER_SCHEMA, args).isEmpty(), args);

        MessageAccumulator acc = MessageAccumulator.create();
        try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> s = anthropic.messages().createStreaming(params)) {
            s.stream().forEach(acc::accumulate);
        }
        Message streamed = acc.message();
        assertEquals(StopReason.TOOL_USE, streamed.stopReason().orElseThrow());
        String streamedArgs = Json.MAPPER.writeValueAsString(streamed.content().get(streamed.content().size() - 1).toolUse().orElseThrow()._input());
        assertTrue(JsonSchemaSamplerTest.validate(ToolCallsTest.WEATHER_SCHEMA, streamedArgs).isEmpty(), streamedArgs);
    }

    @Test
    void messagesErrorsTakeAnthropicsShapeAfterTranslation() throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), "/v1/messages", "{\"model\":\"gpt-9\",\"max_tokens\":5,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertEquals(404, r.status());
        assertEquals("error", r.json().get("type").asText());
        assertEquals("NotFoundError", r.json().path("error").get("type").asText());
        TestServers.Reply missing = TestServers.post(SERVER.get(), "/v1/messages", "{\"model\":\"llama-3.1-8b\",\"messages\":[]}");
        assertEquals(400, missing.status());
    }

    @Test
    void messagesStreamCarriesTheGroundTruthOnMessageDelta() throws Exception {
        TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/messages", "{\"model\":\"llama-3.1-8b\",\"max_tokens\":6,"
                + "\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        List<String> types = new ArrayList<>();
        JsonNode delta = null;
        for (TestServers.Event e : s.events()) {
            JsonNode j = e.json();
            types.add(j.get("type").asText());
            if (j.get("type").asText().equals("message_delta")) {
                delta = j;
            }
        }
        assertEquals("message_start", types.get(0));
        assertEquals("message_stop", types.get(types.size() - 1));
        assertEquals(6, delta.path("infersim").path("choices").path(0).path("completion_tokens").asInt());
        assertTrue(s.body().contains("event: content_block_delta\ndata: "), s.body());
    }

    @Test
    void responsesSdkGetsReasoningAndAMessage() {
        Response r = openai.responses().create(ResponseCreateParams.builder().model("llama-3.1-8b").input("Tell me a story")
                .instructions("Be brief.").maxOutputTokens(20L).build());
        assertEquals(ResponseStatus.INCOMPLETE, r.status().orElseThrow());
        assertEquals(20, r.usage().orElseThrow().outputTokens());
        assertEquals(8, r.usage().orElseThrow().outputTokensDetails().reasoningTokens());
        List<ResponseOutputItem> out = r.output();
        assertTrue(out.get(0).isReasoning());
        String text = out.get(1).asMessage().content().get(0).asOutputText().text();
        assertEquals(10, new PromptTokenizer().encode(text).length, text);
    }

    @Test
    void responsesSdkStreamsEventsTheAccumulatorTurnsIntoTheResponse() throws Exception {
        // Without a reasoning parser: vLLM's reasoning_part events (below) are its own, unknown to openai-java 4.8
        MockServer plain = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).build());
        try {
            ResponseCreateParams params = ResponseCreateParams.builder().model("llama-3.1-8b").input("Tell me a story")
                    .maxOutputTokens(20L).build();
            ResponseAccumulator acc = ResponseAccumulator.create();
            List<Long> sequence = new ArrayList<>();
            try (StreamResponse<ResponseStreamEvent> s = TestServers.sdk(plain, "none").responses().createStreaming(params)) {
                s.stream().forEach(e -> {
                    acc.accumulate(e);
                    e.outputTextDelta().ifPresent(d -> sequence.add(d.sequenceNumber()));
                });
            }
            Response r = acc.response();
            assertEquals(20, r.usage().orElseThrow().outputTokens());
            assertEquals(ResponseStatus.INCOMPLETE, r.status().orElseThrow());
            String text = r.output().get(0).asMessage().content().get(0).asOutputText().text();
            assertEquals(20, new PromptTokenizer().encode(text).length, text);
            assertEquals(20, sequence.size(), "one text delta per token");
            for (int i = 1; i < sequence.size(); i++) {
                assertEquals(sequence.get(i - 1) + 1, sequence.get(i));
            }
        } finally {
            TestServers.close(plain);
        }
    }

    @Test
    void responsesStreamOfAReasoningModelHasVllmsReasoningEventsThenText() throws Exception {
        TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/responses", "{\"model\":\"llama-3.1-8b\",\"input\":\"hi\","
                + "\"max_output_tokens\":20,\"stream\":true}");
        List<String> types = new ArrayList<>();
        for (TestServers.Event e : s.events()) {
            types.add(e.json().get("type").asText());
        }
        assertEquals(List.of("response.created", "response.in_progress", "response.output_item.added",
                "response.reasoning_part.added"), types.subList(0, 4));
        assertEquals(8, types.stream().filter("response.reasoning_text.delta"::equals).count());
        assertEquals(10, types.stream().filter("response.output_text.delta"::equals).count());
        assertEquals("response.completed", types.get(types.size() - 1));
        JsonNode completed = s.events().get(s.events().size() - 1).json().get("response");
        assertEquals(8, completed.path("usage").path("output_tokens_details").get("reasoning_tokens").asInt());
        assertEquals(20, completed.path("infersim").path("choices").path(0).path("completion_tokens").asInt());
    }

    @Test
    void responsesFunctionCallArgumentsValidate() throws Exception {
        String body = "{\"model\":\"llama-3.1-8b\",\"input\":\"Weather?\",\"tool_choice\":\"required\",\"tools\":[{\"type\":"
                + "\"function\",\"name\":\"get_weather\",\"parameters\":" + ToolCallsTest.WEATHER_SCHEMA + "}]}";
        JsonNode r = TestServers.post(SERVER.get(), "/v1/responses", body).json();
        JsonNode call = null;
        for (JsonNode item : r.get("output")) {
            if (item.get("type").asText().equals("function_call")) {
                call = item;
            }
        }
        assertEquals("get_weather", call.get("name").asText());
        assertTrue(JsonSchemaSamplerTest.validate(ToolCallsTest.WEATHER_SCHEMA, call.get("arguments").asText()).isEmpty());
        assertEquals(400, TestServers.post(SERVER.get(), "/v1/responses", "{\"model\":\"llama-3.1-8b\",\"input\":\"x\","
                + "\"tool_choice\":\"required\"}").status());
    }
}
