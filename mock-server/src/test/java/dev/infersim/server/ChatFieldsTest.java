package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.JsonValue;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The /v1/chat/completions request fields vLLM's chat endpoint honours beyond the OpenAI basics, as vLLM answers them. */
class ChatFieldsTest {
    private static final String MODEL = "llama-3.1-8b";
    private static final PromptTokenizer TOKENIZER = new PromptTokenizer();
    private static final String PREFILLED = """
            {"messages":[{"role":"user","content":"Tell a story"},{"role":"assistant","content":"Once upon"}],
             "max_tokens":3,"ignore_eos":true,"echo":true""";
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(64), 50).build());
    private static OpenAIClient client;

    @BeforeAll
    static void connect() {
        client = TestServers.sdk(SERVER.get(), "none");
    }

    private static JsonNode chat(String body) throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), "/v1/chat/completions", body);
        assertEquals(200, r.status(), r.raw().body());
        return r.json();
    }

    @Test
    void echoPrependsTheLastMessageOnlyWhenItIsTheAssistantsOwn() throws Exception {
        ChatCompletion c = client.chat().completions().create(ChatCompletionCreateParams.builder().model(MODEL)
                .addUserMessage("Tell a story").addAssistantMessage("Once upon").maxCompletionTokens(3).n(2)
                .putAdditionalBodyProperty("ignore_eos", JsonValue.from(true))
                .putAdditionalBodyProperty("echo", JsonValue.from(true)).build());
        for (ChatCompletion.Choice ch : c.choices()) {
            String text = ch.message().content().orElseThrow();
            assertTrue(text.startsWith("Once upon"), text);
            assertEquals(3, TOKENIZER.encode(text.substring("Once upon".length())).length, text);
        }
        assertEquals(6, c.usage().orElseThrow().completionTokens(), "the echoed message is prompt, not completion");
        JsonNode user = chat("""
                {"messages":[{"role":"user","content":"Tell a story"}],"max_tokens":3,"ignore_eos":true,"echo":true}""");
        assertFalse(user.at("/choices/0/message/content").asText().startsWith("Tell a story"), user.toString());
        JsonNode off = chat(PREFILLED.replace("\"echo\":true", "\"echo\":false") + "}");
        assertFalse(off.at("/choices/0/message/content").asText().startsWith("Once upon"), off.toString());
    }

    @Test
    void streamedEchoIsItsOwnChunkRightAfterTheRoleChunk() throws Exception {
        TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/chat/completions", PREFILLED
                + ",\"stream\":true,\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}}");
        assertEquals(200, s.status());
        JsonNode role = s.events().get(0).json();
        assertEquals("assistant", role.at("/choices/0/delta/role").asText());
        JsonNode echo = s.events().get(1).json();
        assertEquals("Once upon", echo.at("/choices/0/delta/content").asText(), echo.toString());
        assertTrue(echo.at("/choices/0/delta/role").isMissingNode(), echo.toString());
        assertTrue(echo.at("/choices/0/logprobs").isNull(), echo.toString());
        assertEquals(0, echo.at("/usage/completion_tokens").asInt(), echo.toString());
        long content = s.events().stream().filter(e -> e.data().contains("\"content\":\"Once upon\"")).count();
        assertEquals(1, content, s.body());
        TestServers.Stream user = TestServers.stream(SERVER.get(), "/v1/chat/completions", """
                {"messages":[{"role":"user","content":"Hi"}],"max_tokens":2,"ignore_eos":true,"echo":true,"stream":true}""");
        assertFalse(user.events().get(1).data().contains("\"Hi\""), user.body());
    }

    @Test
    void promptLogprobsAreOneTopLevelListOverTheTemplatedPrompt() throws Exception {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":2,\"n\":2,";
        JsonNode r = chat(body + "\"prompt_logprobs\":2}");
        JsonNode pl = r.get("prompt_logprobs");
        int promptTokens = r.at("/usage/prompt_tokens").asInt();
        assertEquals(promptTokens, pl.size(), r.toString());
        assertTrue(pl.get(0).isNull());
        for (int j = 1; j < pl.size(); j++) {
            assertEquals(2, pl.get(j).size(), pl.get(j).toString());
            List<JsonNode> entries = List.copyOf(pl.get(j).findParents("rank"));
            assertEquals(1, entries.get(0).get("rank").asInt(), "the prompt token itself comes first, as the likeliest");
            assertTrue(entries.get(0).has("decoded_token"));
        }
        assertTrue(r.at("/choices/0/prompt_logprobs").isMissingNode(), "chat has no per-choice prompt_logprobs");
        assertTrue(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":2}").get("prompt_logprobs").isNull(),
                "vLLM's chat body always carries the field");
        JsonNode echoed = chat(PREFILLED + "}");
        assertEquals(echoed.at("/usage/prompt_tokens").asInt(), echoed.get("prompt_logprobs").size(),
                "echo asks for prompt logprobs at top_logprobs' depth (default 0, one entry a token)");
        assertEquals(1, echoed.get("prompt_logprobs").get(1).size());
    }
}
