package dev.infersim.server;

import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.errors.RateLimitException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.models.Model;
import dev.infersim.server.routes.HttpBasics;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The official OpenAI Java SDK, pointed at the mock, sees a well-formed OpenAI-compatible server. */
class OpenAiSdkTest {
    private static final String KEY = "test-key";
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(256), 20).apiKey(KEY).build());
    private static OpenAIClient client;

    @BeforeAll
    static void connect() {
        client = sdk(KEY);
    }

    private static OpenAIClient sdk(String key) {
        return TestServers.sdk(SERVER.get(), key);
    }

    private static ChatCompletionCreateParams.Builder chat(int maxTokens) {
        return ChatCompletionCreateParams.builder().model("llama-3.1-8b").addUserMessage("Tell me about the river")
                .maxCompletionTokens(maxTokens);
    }

    @Test
    void chatCompletionReportsUsageAndLengthFinish() {
        ChatCompletion c = client.chat().completions().create(chat(12).putAdditionalBodyProperty("ignore_eos",
                com.openai.core.JsonValue.from(true)).build());
        assertEquals(1, c.choices().size());
        assertEquals(ChatCompletion.Choice.FinishReason.LENGTH, c.choices().get(0).finishReason());
        assertEquals(12, c.usage().orElseThrow().completionTokens());
        assertEquals(new PromptTokenizer().encode(c.choices().get(0).message().content().orElseThrow()).length, 12);
        assertTrue(c.usage().orElseThrow().promptTokens() > 5);
        assertTrue(c.id().startsWith("chatcmpl-"));
    }

    @Test
    void chatStreamDeliversOneTokenPerChunkThenUsage() {
        ChatCompletionCreateParams params = chat(20).streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
                .putAdditionalBodyProperty("ignore_eos", com.openai.core.JsonValue.from(true)).build();
        List<String> pieces = new ArrayList<>();
        long[] completionTokens = {-1};
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
            stream.stream().forEach(chunk -> {
                chunk.choices().forEach(ch -> ch.delta().content().filter(s -> !s.isEmpty()).ifPresent(pieces::add));
                chunk.usage().ifPresent(u -> completionTokens[0] = u.completionTokens());
            });
        }
        assertEquals(20, pieces.size());
        assertEquals(20, completionTokens[0]);
        assertEquals(20, new PromptTokenizer().encode(String.join("", pieces)).length);
    }

    @Test
    void completionsAcceptsAStringPrompt() {
        Completion c = client.completions().create(CompletionCreateParams.builder().model("llama-3.1-8b")
                .prompt("Once upon a time").maxTokens(7).n(2).build());
        assertEquals(2, c.choices().size());
        assertEquals(14, c.usage().orElseThrow().completionTokens());
        assertEquals(4, c.usage().orElseThrow().promptTokens());
        assertFalse(c.choices().get(1).text().isEmpty());
    }

    @Test
    void modelsListsTheServedModel() {
        List<Model> models = client.models().list().data();
        assertEquals(1, models.size());
        assertEquals("llama-3.1-8b", models.get(0).id());
    }

    @Test
    void errorsMapToTheSdkExceptions() {
        assertThrows(NotFoundException.class, () -> client.chat().completions().create(
                ChatCompletionCreateParams.builder().model("gpt-9").addUserMessage("hi").build()));
        assertThrows(BadRequestException.class, () -> client.chat().completions().create(chat(200_000).build()));
        assertThrows(UnauthorizedException.class, () -> sdk("wrong").chat().completions().create(chat(3).build()));
        assertThrows(RateLimitException.class, () -> client.chat().completions().create(chat(3)
                .putAdditionalHeader(HttpBasics.FAULT_HEADER, "rate_limit").build()));
    }
}
