package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.errors.BadRequestException;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionChoice;
import com.openai.models.completions.CompletionCreateParams;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The /v1/completions request fields vLLM's completions endpoint honours or refuses, seen as vLLM answers them. */
class CompletionsFieldsTest {
    private static final String MODEL = "llama-3.1-8b";
    private static MockServer server;
    private static OpenAIClient client;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(TestServers.options(TestServers.llama8b(64), 50).build());
        client = OpenAIOkHttpClient.builder().baseUrl(server.baseUrl() + "/v1").apiKey("none").maxRetries(0).build();
    }

    @AfterAll
    static void stop() throws Exception {
        TestServers.close(server);
    }

    private static CompletionCreateParams.Builder completion(String prompt, long maxTokens) {
        return CompletionCreateParams.builder().model(MODEL).prompt(prompt).maxTokens(maxTokens)
                .putAdditionalBodyProperty("ignore_eos", JsonValue.from(true));
    }

    @Test
    void logprobsZeroGivesEachTokenItsOwnLogprobAsTheOnlyTopEntry() throws Exception {
        Completion c = client.completions().create(completion("Once upon a time", 4).logprobs(0).build());
        CompletionChoice.Logprobs lp = c.choices().get(0).logprobs().orElseThrow();
        assertEquals(4, lp.tokens().orElseThrow().size());
        for (int i = 0; i < 4; i++) {
            Map<String, Double> top = lp.topLogprobs().orElseThrow().get(i)._additionalProperties().entrySet().stream()
                    .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> ((Number) e.getValue().asNumber().orElseThrow()).doubleValue()));
            assertEquals(Map.of(lp.tokens().orElseThrow().get(i), lp.tokenLogprobs().orElseThrow().get(i)), top);
        }
        TestServers.Stream s = TestServers.stream(server, "/v1/completions", """
                {"prompt":"Once","max_tokens":3,"ignore_eos":true,"stream":true,"logprobs":0}""");
        for (int i = 0; i < 3; i++) {
            JsonNode l = s.events().get(i).json().at("/choices/0/logprobs");
            assertEquals(1, l.get("top_logprobs").size(), l.toString());
            assertEquals(l.at("/token_logprobs/0").asDouble(), l.at("/top_logprobs/0").get(l.at("/tokens/0").asText()).asDouble());
        }
        JsonNode two = TestServers.post(server, "/v1/completions", """
                {"prompt":"Once","max_tokens":2,"ignore_eos":true,"logprobs":2}""").json();
        assertEquals(2, two.at("/choices/0/logprobs/top_logprobs/0").size(), "the sampled token is the likeliest of the two");
        assertTrue(two.at("/choices/0/logprobs/text_offset/1").asInt() > 0);
    }

    /** A 400 in vLLM's error shape: {"error":{"message","type":"BadRequestError","param","code":400}}. */
    private static JsonNode badRequest(String path, String body) throws Exception {
        TestServers.Reply r = TestServers.post(server, path, body);
        assertEquals(400, r.status(), r.raw().body());
        JsonNode e = r.json().get("error");
        assertEquals("BadRequestError", e.get("type").asText());
        assertEquals(400, e.get("code").asInt());
        assertTrue(e.has("param"), e.toString());
        return e;
    }

    @Test
    void suffixIsRefusedAsVllmHasNoFillInTheMiddle() throws Exception {
        BadRequestException sdk = assertThrows(BadRequestException.class,
                () -> client.completions().create(completion("def f(", 4).suffix("    return x").build()));
        assertTrue(sdk.getMessage().contains("suffix is not currently supported"), sdk.getMessage());
        for (String suffix : new String[] {"\"x\"", "\"\""}) {
            JsonNode e = badRequest("/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2,\"suffix\":" + suffix + "}");
            assertEquals("suffix is not currently supported", e.get("message").asText());
            assertTrue(e.get("param").isNull());
        }
        assertEquals(200, TestServers.post(server, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2,\"suffix\":null}").status());
    }
}
