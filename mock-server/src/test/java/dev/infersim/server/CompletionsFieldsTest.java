package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.JsonValue;
import com.openai.errors.BadRequestException;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionChoice;
import com.openai.models.completions.CompletionCreateParams;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The /v1/completions request fields vLLM's completions endpoint honours or refuses, seen as vLLM answers them. */
class CompletionsFieldsTest {
    private static final String MODEL = "llama-3.1-8b";
    private static final PromptTokenizer TOKENIZER = new PromptTokenizer();
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(64), 50).build());
    private static OpenAIClient client;

    @BeforeAll
    static void connect() {
        client = TestServers.sdk(SERVER.get(), "none");
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
        TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/completions", """
                {"prompt":"Once","max_tokens":3,"ignore_eos":true,"stream":true,"logprobs":0}""");
        for (int i = 0; i < 3; i++) {
            JsonNode l = s.events().get(i).json().at("/choices/0/logprobs");
            assertEquals(1, l.get("top_logprobs").size(), l.toString());
            assertEquals(l.at("/token_logprobs/0").asDouble(), l.at("/top_logprobs/0").get(l.at("/tokens/0").asText()).asDouble());
        }
        JsonNode two = TestServers.post(SERVER.get(), "/v1/completions", """
                {"prompt":"Once","max_tokens":2,"ignore_eos":true,"logprobs":2}""").json();
        assertEquals(2, two.at("/choices/0/logprobs/top_logprobs/0").size(), "the sampled token is the likeliest of the two");
        assertTrue(two.at("/choices/0/logprobs/text_offset/1").asInt() > 0);
    }

    /** A 400 in vLLM's error shape: {"error":{"message","type":"BadRequestError","param","code":400}}. */
    private static JsonNode badRequest(String path, String body) throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), path, body);
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
        assertEquals(200, TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2,\"suffix\":null}").status());
    }

    @Test
    void echoPrependsThePromptTextAndUsageCountsOnlyRealTokens() throws Exception {
        String prompt = "Once upon a time";
        Completion c = client.completions().create(completion(prompt, 5).echo(true).n(2).build());
        for (CompletionChoice ch : c.choices()) {
            assertTrue(ch.text().startsWith(prompt), ch.text());
            assertEquals(5, TOKENIZER.encode(ch.text().substring(prompt.length())).length, ch.text());
        }
        assertEquals(4, c.usage().orElseThrow().promptTokens());
        assertEquals(10, c.usage().orElseThrow().completionTokens());
        JsonNode ids = TestServers.post(SERVER.get(), "/v1/completions", """
                {"prompt":[[9906,1917],[9906]],"max_tokens":2,"ignore_eos":true,"echo":true}""").json();
        // Each choice echoes its own prompt's text, then its 2 tokens.
        assertTrue(ids.at("/choices/0/text").asText().startsWith("Hello world"), ids.toString());
        assertEquals(2, TOKENIZER.encode(ids.at("/choices/0/text").asText().substring("Hello world".length())).length, ids.toString());
        assertTrue(ids.at("/choices/1/text").asText().startsWith("Hello"), ids.toString());
        assertEquals(2, TOKENIZER.encode(ids.at("/choices/1/text").asText().substring("Hello".length())).length, ids.toString());
        JsonNode plain = TestServers.post(SERVER.get(), "/v1/completions", """
                {"prompt":"Once","max_tokens":2,"ignore_eos":true,"echo":false}""").json();
        assertFalse(plain.at("/choices/0/text").asText().startsWith("Once"), plain.toString());
    }

    @Test
    void echoWithMaxTokensZeroReturnsThePromptAloneAndWithoutEchoIs400() throws Exception {
        JsonNode r = TestServers.post(SERVER.get(), "/v1/completions", """
                {"prompt":"Once upon a time","max_tokens":0,"echo":true}""").json();
        assertEquals("Once upon a time", r.at("/choices/0/text").asText());
        assertEquals(4, r.at("/usage/prompt_tokens").asInt());
        assertEquals(1, r.at("/usage/completion_tokens").asInt(), "vLLM still runs one token and counts it");
        assertEquals("length", r.at("/choices/0/finish_reason").asText());
        assertEquals("max_tokens", badRequest("/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":0}").get("param").asText());
        TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/completions", """
                {"prompt":"Once upon a time","max_tokens":0,"echo":true,"stream":true}""");
        assertEquals(2, s.events().size(), s.body());
        JsonNode only = s.events().get(0).json();
        assertEquals("Once upon a time", only.at("/choices/0/text").asText());
        assertEquals("length", only.at("/choices/0/finish_reason").asText());
    }

    @Test
    void echoLogprobsCoverThePromptWhoseFirstTokenHasNone() throws Exception {
        String prompt = "Once upon a time";
        JsonNode r = TestServers.post(SERVER.get(), "/v1/completions", """
                {"prompt":"Once upon a time","max_tokens":3,"ignore_eos":true,"echo":true,"logprobs":1}""").json();
        JsonNode lp = r.at("/choices/0/logprobs");
        assertEquals(4 + 3, lp.get("tokens").size(), lp.toString());
        assertEquals(List.of("Once", " upon", " a", " time"), texts(lp.get("tokens")).subList(0, 4));
        assertTrue(lp.at("/token_logprobs/0").isNull() && lp.at("/top_logprobs/0").isNull(), lp.toString());
        for (int i = 1; i < 7; i++) {
            assertTrue(lp.at("/token_logprobs/" + i).asDouble() <= 0, lp.toString());
            assertEquals(lp.at("/token_logprobs/" + i).asDouble(), lp.at("/top_logprobs/" + i).get(lp.at("/tokens/" + i).asText()).asDouble());
        }
        assertEquals(0, lp.at("/text_offset/0").asInt());
        assertEquals(prompt.length(), lp.at("/text_offset/4").asInt());
        assertEquals(r.at("/choices/0/text").asText(), String.join("", texts(lp.get("tokens"))));
        JsonNode promptOnly = TestServers.post(SERVER.get(), "/v1/completions", """
                {"prompt":"Once upon a time","max_tokens":0,"echo":true,"logprobs":0}""").json();
        assertEquals(4, promptOnly.at("/choices/0/logprobs/tokens").size(), promptOnly.toString());
    }

    @Test
    void echoStreamsThePromptWithTheFirstToken() throws Exception {
        String prompt = "Once upon a time";
        TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/completions", """
                {"prompt":"Once upon a time","max_tokens":4,"ignore_eos":true,"echo":true,"logprobs":0,"stream":true,
                 "stream_options":{"include_usage":true}}""");
        List<TestServers.Event> events = s.events();
        assertEquals(4 + 1 + 1, events.size(), s.body());
        JsonNode first = events.get(0).json().at("/choices/0");
        assertTrue(first.get("text").asText().startsWith(prompt), first.toString());
        assertEquals(1, TOKENIZER.encode(first.get("text").asText().substring(prompt.length())).length);
        assertEquals(4 + 1, first.at("/logprobs/tokens").size(), first.toString());
        assertTrue(first.at("/logprobs/token_logprobs/0").isNull());
        StringBuilder text = new StringBuilder(first.get("text").asText());
        for (int i = 1; i < 4; i++) {
            JsonNode ch = events.get(i).json().at("/choices/0");
            assertEquals(text.length(), ch.at("/logprobs/text_offset/0").asInt(), "offsets count the streamed text, prompt included");
            text.append(ch.get("text").asText());
        }
        assertEquals(4, events.get(4).json().at("/usage/completion_tokens").asInt());
        assertEquals(4, events.get(4).json().at("/usage/prompt_tokens").asInt());
        TestServers.Stream plain = TestServers.stream(SERVER.get(), "/v1/completions", """
                {"prompt":"Once upon a time","max_tokens":2,"ignore_eos":true,"echo":true,"stream":true}""");
        assertTrue(plain.events().get(0).json().at("/choices/0/text").asText().startsWith(prompt));
        assertFalse(plain.events().get(1).json().at("/choices/0/text").asText().startsWith(prompt));
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    @Test
    void completionsWithoutMaxTokensStopAtVllmsDefaultOf16() throws Exception {
        for (String maxTokens : new String[] {"", ",\"max_tokens\":null"}) {
            JsonNode r = TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":\"x\",\"ignore_eos\":true" + maxTokens + "}").json();
            assertEquals(16, r.at("/usage/completion_tokens").asInt(), r.toString());
            assertEquals("length", r.at("/choices/0/finish_reason").asText());
        }
        assertEquals("min_tokens", badRequest("/v1/completions", "{\"prompt\":\"x\",\"min_tokens\":17}").get("param").asText());
    }

    @Test
    void bestOfAboveOneIs400AsVllmV1DoesNotSampleExtraSequences() throws Exception {
        String[] bodies = {"{\"prompt\":\"x\",\"max_tokens\":2,", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":2,"};
        String[] paths = {"/v1/completions", "/v1/chat/completions"};
        for (int i = 0; i < 2; i++) {
            assertEquals("vLLM V1 does not yet support best_of.",
                    badRequest(paths[i], bodies[i] + "\"best_of\":3}").get("message").asText());
            assertEquals("best_of must be greater than or equal to n, got n=2 and best_of=1.",
                    badRequest(paths[i], bodies[i] + "\"n\":2,\"best_of\":1}").get("message").asText());
            assertEquals(200, TestServers.post(SERVER.get(), paths[i], bodies[i] + "\"n\":2,\"best_of\":null}").status());
            assertEquals(200, TestServers.post(SERVER.get(), paths[i], bodies[i] + "\"best_of\":1}").status());
        }
        assertThrows(BadRequestException.class, () -> client.completions().create(completion("x", 2).bestOf(2).build()));
    }

    @Test
    void anEmptyStreamOptionsObjectWithoutStreamIsAcceptedAsInVllm() throws Exception {
        assertEquals(200, TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"stream_options\":{}}").status());
        assertEquals("stream_options", badRequest("/v1/completions",
                "{\"prompt\":\"x\",\"max_tokens\":2,\"stream_options\":{\"include_usage\":false}}").get("param").asText());
    }

    @Test
    void promptLogprobsAreRefusedInAStreamAndOutOfRangeAndListedOtherwise() throws Exception {
        JsonNode e = badRequest("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"stream\":true,\"prompt_logprobs\":1}");
        assertEquals("prompt_logprobs", e.get("param").asText());
        assertEquals("`prompt_logprobs` are not available when `stream=True`.", e.get("message").asText());
        assertEquals("prompt_logprobs", badRequest("/v1/completions", "{\"prompt\":\"x\",\"prompt_logprobs\":-2}").get("param").asText());
        assertEquals("prompt_logprobs", badRequest("/v1/completions", "{\"prompt\":\"x\",\"prompt_logprobs\":21}").get("param").asText());
        assertEquals(200, TestServers.post(SERVER.get(), "/v1/completions",
                "{\"prompt\":\"x\",\"max_tokens\":2,\"stream\":true,\"prompt_logprobs\":0}").status());
        JsonNode r = TestServers.post(SERVER.get(), "/v1/completions", """
                {"prompt":"Once upon a time","max_tokens":2,"prompt_logprobs":2}""").json();
        JsonNode pl = r.at("/choices/0/prompt_logprobs");
        assertEquals(4, pl.size(), r.toString());
        assertTrue(pl.get(0).isNull());
        int[] ids = TOKENIZER.encode("Once upon a time");
        for (int i = 1; i < 4; i++) {
            JsonNode own = pl.get(i).get(String.valueOf(ids[i]));
            assertEquals(TOKENIZER.piece(ids[i]), own.get("decoded_token").asText(), pl.toString());
            assertEquals(1, own.get("rank").asInt());
            assertTrue(own.get("logprob").asDouble() <= 0);
            assertEquals(2, pl.get(i).size(), pl.toString());
        }
        assertTrue(TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2}").json()
                .at("/choices/0/prompt_logprobs").isNull(), "present and null when not asked, as vLLM dumps it");
    }

    @Test
    void logitBiasKeysMustBeTokenIdsOfTheVocabulary() throws Exception {
        assertEquals(200, TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"logit_bias\":{\"9906\":-100}}").status());
        JsonNode e = badRequest("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"logit_bias\":{\"999999\":5}}");
        assertTrue(e.get("message").asText().contains("out-of-vocab"), e.toString());
        badRequest("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"logit_bias\":{\"hello\":5}}");
        badRequest("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logit_bias\":{\"1\":\"up\"}}");
    }
}
