package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionNamedToolChoice;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.chat.completions.ChatCompletionToolChoiceOption;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.output.JsonSchemaSamplerTest;
import dev.infersim.server.output.OutputSpec;
import dev.infersim.server.request.RequestParser;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tool calls through the official OpenAI Java SDK and raw HTTP: arguments drawn from the function's schema validate
 * against it, streamed as vLLM streams tool-call deltas, with vLLM's finish reasons and token counts.
 */
class ToolCallsTest {
    static final String WEATHER_SCHEMA = "{\"type\":\"object\",\"properties\":{"
            + "\"city\":{\"type\":\"string\",\"minLength\":2},"
            + "\"unit\":{\"type\":\"string\",\"enum\":[\"celsius\",\"fahrenheit\"]},"
            + "\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":14},"
            + "\"where\":{\"type\":\"object\",\"properties\":{\"lat\":{\"type\":\"number\",\"minimum\":-90,\"maximum\":90},"
            + "\"lon\":{\"type\":\"number\",\"minimum\":-180,\"maximum\":180}},\"required\":[\"lat\",\"lon\"]},"
            + "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,\"maxItems\":3}},"
            + "\"required\":[\"city\",\"unit\",\"days\",\"where\",\"tags\"],\"additionalProperties\":false}";

    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(64), 50)
            .features(ModelFeatures.NONE.withTools("hermes", true, 1.0)).build());
    private static OpenAIClient client;

    @BeforeAll
    static void connect() {
        client = TestServers.sdk(SERVER.get(), "none");
    }

    static FunctionDefinition weather() throws Exception {
        Map<String, Object> schema = Json.MAPPER.readValue(WEATHER_SCHEMA, Map.class);
        FunctionParameters.Builder p = FunctionParameters.builder();
        schema.forEach((k, v) -> p.putAdditionalProperty(k, JsonValue.from(v)));
        return FunctionDefinition.builder().name("get_weather").description("Forecast").parameters(p.build()).build();
    }

    private static ChatCompletionCreateParams.Builder ask() throws Exception {
        return ChatCompletionCreateParams.builder().model("llama-3.1-8b").addUserMessage("Weather in Paris?")
                .addFunctionTool(weather()).addFunctionTool(FunctionDefinition.builder().name("noop").build());
    }

    private static ChatCompletionNamedToolChoice named(String name) {
        return ChatCompletionNamedToolChoice.builder().function(ChatCompletionNamedToolChoice.Function.builder().name(name).build()).build();
    }

    @Test
    void sdkStreamsANamedToolCallWhoseArgumentsValidateAgainstTheSchema() throws Exception {
        ChatCompletionCreateParams params = ask().toolChoice(named("get_weather"))
                .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build();
        StringBuilder arguments = new StringBuilder();
        List<String> ids = new ArrayList<>();
        List<String> names = new ArrayList<>();
        String[] finish = {null};
        long[] completion = {-1};
        int[] argumentChunks = {0};
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
            stream.stream().forEach(chunk -> {
                chunk.usage().ifPresent(u -> completion[0] = u.completionTokens());
                for (ChatCompletionChunk.Choice ch : chunk.choices()) {
                    ch.finishReason().ifPresent(f -> finish[0] = f.asString());
                    for (ChatCompletionChunk.Choice.Delta.ToolCall tc : ch.delta().toolCalls().orElse(List.of())) {
                        assertEquals(0, tc.index());
                        tc.id().ifPresent(ids::add);
                        tc.function().flatMap(ChatCompletionChunk.Choice.Delta.ToolCall.Function::name).ifPresent(names::add);
                        tc.function().flatMap(ChatCompletionChunk.Choice.Delta.ToolCall.Function::arguments).ifPresent(a -> {
                            arguments.append(a);
                            argumentChunks[0]++;
                        });
                    }
                }
            });
        }
        assertEquals(1, ids.size(), "the id comes once, with the first delta");
        assertTrue(ids.get(0).startsWith("chatcmpl-tool-"), ids.get(0));
        assertEquals(List.of("get_weather"), names);
        assertTrue(JsonSchemaSamplerTest.validate(WEATHER_SCHEMA, arguments.toString()).isEmpty(), arguments.toString());
        assertEquals("stop", finish[0], "vLLM finishes a named tool call with the engine's reason");
        // a named call's output is the arguments alone: one token per delta, each counted
        assertEquals(new PromptTokenizer().encode(arguments.toString()).length, argumentChunks[0]);
        assertEquals(argumentChunks[0], completion[0]);
    }

    @Test
    void requiredToolChoiceCallsAToolAndFinishesWithToolCalls() throws Exception {
        ChatCompletion c = client.chat().completions().create(ask().toolChoice(ChatCompletionToolChoiceOption.Auto.REQUIRED).seed(7L).build());
        ChatCompletion.Choice choice = c.choices().get(0);
        assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, choice.finishReason());
        assertEquals("", choice.message().content().orElseThrow());
        ChatCompletionMessageFunctionToolCall call = choice.message().toolCalls().orElseThrow().get(0).asFunction();
        String args = call.function().arguments();
        if (call.function().name().equals("get_weather")) {
            assertTrue(JsonSchemaSamplerTest.validate(WEATHER_SCHEMA, args).isEmpty(), args);
        } else {
            assertEquals("noop", call.function().name());
            assertTrue(Json.MAPPER.readTree(args).isObject(), args);
        }
        // the model also wrote the [{"name": ..., "parameters": ...}] wrapper, which usage counts
        assertTrue(c.usage().orElseThrow().completionTokens() > new PromptTokenizer().encode(args).length);
    }

    @Test
    void autoToolChoiceStreamsHermesDeltasNameFirst() throws Exception {
        TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/chat/completions", "{\"model\":\"llama-3.1-8b\","
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true,\"tools\":[{\"type\":\"function\","
                + "\"function\":{\"name\":\"get_weather\",\"parameters\":" + WEATHER_SCHEMA + "}}]}");
        assertEquals(200, s.status());
        List<JsonNode> deltas = new ArrayList<>();
        String finish = null;
        for (TestServers.Event e : s.events()) {
            if (e.data().equals("[DONE]")) {
                continue;
            }
            JsonNode choice = e.json().path("choices").path(0);
            if (choice.path("delta").has("tool_calls")) {
                deltas.add(choice.path("delta").path("tool_calls").path(0));
            }
            if (choice.hasNonNull("finish_reason")) {
                finish = choice.get("finish_reason").asText();
            }
        }
        JsonNode head = deltas.get(0);
        assertEquals("function", head.get("type").asText());
        assertEquals("get_weather", head.path("function").get("name").asText());
        assertFalse(head.path("function").has("arguments"), "Hermes names the call before any arguments: " + head);
        StringBuilder args = new StringBuilder();
        for (JsonNode d : deltas.subList(1, deltas.size())) {
            assertFalse(d.has("id"), d.toString());
            args.append(d.path("function").get("arguments").asText());
        }
        assertTrue(JsonSchemaSamplerTest.validate(WEATHER_SCHEMA, args.toString()).isEmpty(), args.toString());
        assertEquals("tool_calls", finish);
    }

    @Test
    void aNonStreamCallHasTheArgumentsTheStreamHadForTheSameSeed() throws Exception {
        String body = "{\"model\":\"llama-3.1-8b\",\"seed\":11,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"tool_choice\":\"required\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
                + "\"parameters\":" + WEATHER_SCHEMA + "}}]";
        JsonNode whole = TestServers.post(SERVER.get(), "/v1/chat/completions", body + "}").json();
        JsonNode message = whole.path("choices").path(0).path("message");
        String args = message.path("tool_calls").path(0).path("function").path("arguments").asText();
        TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/chat/completions", body + ",\"stream\":true}");
        StringBuilder streamed = new StringBuilder();
        for (TestServers.Event e : s.events()) {
            if (!e.data().equals("[DONE]")) {
                JsonNode tc = e.json().path("choices").path(0).path("delta").path("tool_calls").path(0);
                if (tc.has("function") && tc.path("function").hasNonNull("arguments")) {
                    streamed.append(tc.path("function").get("arguments").asText());
                }
            }
        }
        assertEquals(args, streamed.toString());
        assertNull(whole.path("choices").path(0).path("message").get("reasoning").textValue());
        assertEquals(whole.path("usage").path("completion_tokens").asInt(),
                whole.path("infersim").path("choices").path(0).path("completion_tokens").asInt());
    }

    @Test
    void autoWithoutACallAnswersInText() throws Exception {
        MockServer plain = TestServers.start(TestServers.options(TestServers.llama8b(8), 50)
                .features(ModelFeatures.NONE.withTools("hermes", true, 0.0)).build());
        try {
            ChatCompletion c = TestServers.sdk(plain, "none").chat().completions().create(ask().maxCompletionTokens(5).build());
            assertTrue(c.choices().get(0).message().toolCalls().orElse(List.of()).isEmpty());
            assertFalse(c.choices().get(0).message().content().orElseThrow().isEmpty());
            assertEquals(ChatCompletion.Choice.FinishReason.LENGTH, c.choices().get(0).finishReason());
        } finally {
            TestServers.close(plain);
        }
    }

    @Test
    void toolChoiceIsValidatedAsVllmValidatesIt() throws Exception {
        String tools = ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]";
        String msgs = "{\"model\":\"llama-3.1-8b\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
        assertError(msgs + ",\"tool_choice\":\"required\"}", "When using `tool_choice`, `tools` must be set.");
        assertError(msgs + tools + ",\"tool_choice\":\"sometimes\"}", "Invalid value for `tool_choice`: sometimes!");
        assertError(msgs + tools + ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"g\"}}}",
                "does not match any of the specified `tools`");
        assertError(msgs + ",\"tools\":[]}", "`tools` must not be an empty array.");
        assertError(msgs + tools + ",\"tool_choice\":{\"type\":\"function\"}}", "Invalid value for `function`");
    }

    private static void assertError(String body, String message) throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), "/v1/chat/completions", body);
        assertEquals(400, r.status(), r.raw().body());
        assertTrue(r.json().path("error").path("message").asText().contains(message), r.raw().body());
    }

    @Test
    void withoutAToolParserToolChoicesAreRefusedAsVllmRefusesThem() {
        ModelFeatures none = ModelFeatures.NONE;
        ApiException auto = org.junit.jupiter.api.Assertions.assertThrows(ApiException.class, () -> OutputSpec.ofChat(
                RequestParser.object(("{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}").getBytes()), none));
        assertEquals("\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set", auto.getMessage());
        ApiException required = org.junit.jupiter.api.Assertions.assertThrows(ApiException.class, () -> OutputSpec.ofChat(
                RequestParser.object(("{\"tool_choice\":\"required\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}")
                        .getBytes()), none));
        assertEquals("tool_choice=\"required\" requires --tool-call-parser to be set", required.getMessage());
        // tool_choice none needs nothing
        assertEquals(OutputSpec.ToolChoice.NONE, OutputSpec.ofChat(RequestParser.object(
                "{\"tool_choice\":\"none\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}".getBytes()), none).toolChoice());
    }
}
