package dev.infersim.server;

import dev.infersim.common.ConfigException;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code serve --tokenizer tokenizer.json}: prompts tokenized by the model's own tokenizer, its BOS included. */
class ModelTokenizerTest {

    private static PromptTokenizer fixture() throws Exception {
        return PromptTokenizer.huggingFace(Path.of(ModelTokenizerTest.class.getResource("/bpe-bos-tokenizer.json").toURI()));
    }

    @Test
    void completionAndChatPromptsStartWithTheTokenizersBosAndRoundTrip() throws Exception {
        PromptTokenizer t = fixture();
        int[] plain = t.encode("hello world");
        int[] prompt = t.encodePrompt("hello world");
        assertEquals(376, prompt[0], "<|begin_of_text|>, added by the post-processor");
        assertEquals(plain.length + 1, prompt.length);
        assertEquals("hello world", t.decode(plain));
        int[] chat = t.applyChatTemplate(List.of(new PromptTokenizer.Message("user", "hi")));
        assertEquals(376, chat[0]);
        assertTrue(t.decode(chat).endsWith("<|im_start|>assistant\n"), t.decode(chat));
        assertEquals(378, t.vocabularySize(), "376 BPE tokens, then BOS and EOS");
        assertTrue(t.isKnown(377));
        assertFalse(t.isKnown(378));
        assertThrows(IllegalArgumentException.class, () -> t.decode(new int[] {378}));
    }

    @Test
    void aFileThatIsNotATokenizerIsOneLineNamingTheFlag(@TempDir Path dir) throws Exception {
        ConfigException missing = assertThrows(ConfigException.class, () -> PromptTokenizer.huggingFace(dir.resolve("nope.json")));
        assertTrue(missing.getMessage().startsWith("--tokenizer: "), missing.getMessage());
        Path junk = Files.writeString(dir.resolve("junk.json"), "{\"model\": {}}");
        ConfigException bad = assertThrows(ConfigException.class, () -> PromptTokenizer.huggingFace(junk));
        assertTrue(bad.getMessage().startsWith("--tokenizer: "), bad.getMessage());
    }

    @Test
    void theServerCountsAndTokenizesPromptsWithTheModelsTokenizer() throws Exception {
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(4), 50).tokenizer(fixture()).build());
        try {
            TestServers.Reply tokens = TestServers.post(server, "/tokenize", "{\"prompt\": \"hello world\"}");
            assertEquals(376, tokens.json().path("tokens").get(0).asInt(), tokens.raw().body());
            int count = tokens.json().path("count").asInt();
            TestServers.Reply done = TestServers.post(server, "/v1/completions", "{\"prompt\": \"hello world\", \"max_tokens\": 2}");
            assertEquals(count, done.json().path("usage").path("prompt_tokens").asInt());
        } finally {
            TestServers.close(server);
        }
    }
}
