package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code add_generation_prompt} and {@code continue_final_message} change the templated prompt as in vLLM. */
class ChatTemplateEndingTest {
    private static final PromptTokenizer TOKENIZER = new PromptTokenizer();
    private static final String MESSAGES =
            "\"messages\":[{\"role\":\"user\",\"content\":\"Tell a story\"},{\"role\":\"assistant\",\"content\":\"Once upon\"}]";
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(8), 1000).build());

    private static TestServers.Reply chat(String flags) throws Exception {
        return TestServers.post(SERVER.get(), "/v1/chat/completions", "{" + MESSAGES + flags + ",\"max_tokens\":2}");
    }

    private static int promptTokens(String flags) throws Exception {
        TestServers.Reply r = chat(flags);
        assertEquals(200, r.status(), r.raw().body());
        return r.json().at("/usage/prompt_tokens").asInt();
    }

    @Test
    void withoutTheGenerationPromptTheAssistantHeaderIsNotCounted() throws Exception {
        int header = 1 + TOKENIZER.encode("assistant\n").length; // <|im_start|> then the role line
        assertEquals(promptTokens("") - header, promptTokens(",\"add_generation_prompt\":false"));
        assertEquals(promptTokens(""), promptTokens(",\"add_generation_prompt\":true"));
    }

    @Test
    void continuingTheFinalMessageLeavesItOpen() throws Exception {
        int closing = 1 + TOKENIZER.encode("\n").length; // <|im_end|> and the newline after it
        assertEquals(promptTokens(",\"add_generation_prompt\":false") - closing,
                promptTokens(",\"add_generation_prompt\":false,\"continue_final_message\":true"));
    }

    @Test
    void tokenizeCountsTheSameEnding() throws Exception {
        String flags = ",\"add_generation_prompt\":false,\"continue_final_message\":true";
        JsonNode t = TestServers.post(SERVER.get(), "/tokenize", "{" + MESSAGES + flags + "}").json();
        assertEquals(promptTokens(flags), t.get("count").asInt(), t.toString());
    }

    @Test
    void continuingTheFinalMessageWithTheGenerationPromptIsRefused() throws Exception {
        TestServers.Reply both = chat(",\"add_generation_prompt\":true,\"continue_final_message\":true");
        assertEquals(400, both.status(), both.raw().body());
        assertEquals("Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
                both.json().at("/error/message").asText());
        // Left at its default (true), the generation prompt still clashes: vLLM's template renderer refuses the pair.
        TestServers.Reply implicit = chat(",\"continue_final_message\":true");
        assertEquals(400, implicit.status(), implicit.raw().body());
        assertTrue(implicit.json().at("/error/message").asText().contains("add_generation_prompt"), implicit.raw().body());
        assertEquals(400, TestServers.post(SERVER.get(), "/tokenize",
                "{" + MESSAGES + ",\"continue_final_message\":true}").status());
    }

    @Test
    void aFlagThatIsNoBooleanIsA400NamingIt() throws Exception {
        TestServers.Reply r = chat(",\"add_generation_prompt\":\"no\"");
        assertEquals(400, r.status(), r.raw().body());
        assertEquals("add_generation_prompt", r.json().at("/error/param").asText());
    }
}
