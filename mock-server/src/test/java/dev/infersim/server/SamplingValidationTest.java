package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.json.Json;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Sampling and format fields the mock does not model but refuses exactly where vLLM's V1 server does. */
class SamplingValidationTest {
    private static final String CHAT = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":2,";
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(64), 50).build());

    /** A 400 in vLLM's error shape; returns the error object. */
    private static JsonNode refused(String path, String body) throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), path, body);
        assertEquals(400, r.status(), body + " -> " + r.raw().body());
        JsonNode e = r.json().get("error");
        assertEquals("BadRequestError", e.get("type").asText());
        assertEquals(400, e.get("code").asInt());
        assertTrue(e.has("param"), e.toString());
        return e;
    }

    private static void refusedAs(String fields, String message, String param) throws Exception {
        JsonNode e = refused("/v1/chat/completions", CHAT + fields + "}");
        assertEquals(message, e.get("message").asText(), fields);
        if (param == null) {
            assertTrue(e.get("param").isNull(), e.toString());
        } else {
            assertEquals(param, e.get("param").asText(), e.toString());
        }
    }

    private static void accepted(String path, String body) throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), path, body);
        assertEquals(200, r.status(), body + " -> " + r.raw().body());
    }

    @Test
    void penaltiesTopKAndMinPFollowVllmsRanges() throws Exception {
        refusedAs("\"presence_penalty\":2.5", "presence_penalty must be in [-2, 2], got 2.5.", null);
        refusedAs("\"frequency_penalty\":-3", "frequency_penalty must be in [-2, 2], got -3.0.", null);
        refusedAs("\"repetition_penalty\":0", "repetition_penalty must be greater than zero, got 0.0.", null);
        refusedAs("\"repetition_penalty\":-0.5", "repetition_penalty must be greater than zero, got -0.5.", null);
        refusedAs("\"top_k\":-2", "top_k must be 0 (disable), or at least 1, got -2.", null);
        refusedAs("\"min_p\":1.5", "min_p must be in [0, 1], got 1.5.", null);
        assertEquals("top_k", refused("/v1/chat/completions", CHAT + "\"top_k\":1.5}").get("param").asText());
        assertEquals("min_p", refused("/v1/chat/completions", CHAT + "\"min_p\":\"low\"}").get("param").asText());
        accepted("/v1/chat/completions", CHAT + "\"presence_penalty\":-2,\"frequency_penalty\":2,\"repetition_penalty\":1.3,"
                + "\"top_k\":-1,\"min_p\":0}");
        accepted("/v1/chat/completions", CHAT + "\"top_k\":0,\"min_p\":1,\"repetition_penalty\":20}");
        JsonNode e = refused("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"top_k\":-5}");
        assertEquals("top_k must be 0 (disable), or at least 1, got -5.", e.get("message").asText());
    }

    @Test
    void nIsBoundedByVllmsSequenceLimitAndGreedySamplingTakesOne() throws Exception {
        refusedAs("\"n\":0", "n must be at least 1, got 0.", null);
        refusedAs("\"n\":16385", "n must be at most 16384, got 16385. To increase this limit, set the VLLM_MAX_N_SEQUENCES "
                + "environment variable.", null);
        refusedAs("\"n\":2,\"temperature\":0", "n must be 1 when using greedy sampling, got 2.", null);
        accepted("/v1/chat/completions", CHAT + "\"n\":1,\"temperature\":0}");
        accepted("/v1/chat/completions", CHAT + "\"n\":2,\"temperature\":0.5}");
        accepted("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"n\":60}");
    }

    @Test
    void allowedTokenIdsMustBeANonEmptyListInsideTheVocabulary() throws Exception {
        refusedAs("\"allowed_token_ids\":[]", "allowed_token_ids is not None and empty! (parameter=allowed_token_ids, value=[])",
                "allowed_token_ids");
        int size = PromptTokenizer.VOCABULARY_SIZE;
        refusedAs("\"allowed_token_ids\":[5," + size + ",-1]", "allowed_token_ids contains out-of-vocab token id! "
                + "(parameter=allowed_token_ids, value=[" + size + ", -1])", "allowed_token_ids");
        assertEquals("allowed_token_ids", refused("/v1/chat/completions", CHAT + "\"allowed_token_ids\":[\"a\"]}")
                .get("param").asText());
        accepted("/v1/chat/completions", CHAT + "\"allowed_token_ids\":[0,1," + (size - 1) + "]}");
        accepted("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"allowed_token_ids\":[42]}");
    }

    @Test
    void responseFormatNeedsAKnownTypeAndJsonSchemaItsSchemaObject() throws Exception {
        refusedAs("\"response_format\":{\"type\":\"json_schema\"}",
                "When response_format type is 'json_schema', the 'json_schema' field must be provided.", "response_format");
        refusedAs("\"response_format\":{\"type\":\"json_schema\",\"json_schema\":null}",
                "When response_format type is 'json_schema', the 'json_schema' field must be provided.", "response_format");
        assertEquals("response_format", refused("/v1/chat/completions", CHAT + "\"response_format\":{\"type\":\"yaml\"}}")
                .get("param").asText());
        assertEquals("response_format", refused("/v1/chat/completions", CHAT + "\"response_format\":{}}").get("param").asText());
        assertEquals("response_format", refused("/v1/chat/completions", CHAT + "\"response_format\":\"json\"}").get("param").asText());
        assertEquals("response_format", refused("/v1/chat/completions",
                CHAT + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{}}}}").get("param").asText());
        accepted("/v1/chat/completions", CHAT + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":"
                + "{\"name\":\"answer\",\"schema\":{\"type\":\"object\"}}}}");
        accepted("/v1/chat/completions", CHAT + "\"response_format\":{\"type\":\"json_object\"}}");
        accepted("/v1/chat/completions", CHAT + "\"response_format\":{\"type\":\"text\"}}");
        accepted("/v1/chat/completions", CHAT + "\"response_format\":null}");
        assertEquals("response_format", refused("/v1/completions",
                "{\"prompt\":\"x\",\"max_tokens\":2,\"response_format\":{\"type\":\"yaml\"}}").get("param").asText());
    }

    private static String text(String seed) throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), "/v1/completions",
                "{\"prompt\":\"x\",\"max_tokens\":8,\"ignore_eos\":true,\"seed\":" + seed + "}");
        assertEquals(200, r.status(), seed + " -> " + r.raw().body());
        return r.json().at("/choices/0/text").asText();
    }

    @Test
    void seedIsAnInt64AsPydanticReadsItAndMinusOneMeansNone() throws Exception {
        String seeded = text("42");
        assertEquals(seeded, text("42.0"), "an integral float is an int to pydantic");
        assertEquals(seeded, text("\"42\""), "so is a string of digits");
        assertNotEquals(text("-1"), text("-1"), "vLLM takes seed -1 as no seed");
        assertEquals(text("1"), text("true"), "pydantic's lax int takes a boolean as 0 or 1");
        for (String bad : new String[] {"42.5", "\"abc\"", "9223372036854775808", "[1]"}) {
            assertEquals("seed", refused("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"seed\":" + bad + "}")
                    .get("param").asText(), bad);
        }
    }

    @Test
    void beamSearchIsNoRefusalButCompletionsAnswerItInOneBody() throws Exception {
        TestServers.Stream completion = TestServers.stream(SERVER.get(), "/v1/completions", """
                {"prompt":"x","max_tokens":3,"ignore_eos":true,"stream":true,"use_beam_search":true}""");
        assertEquals(200, completion.status(), completion.body());
        assertTrue(completion.raw().headers().firstValue("content-type").orElseThrow().startsWith("application/json"),
                completion.body());
        assertEquals("text_completion", Json.MAPPER.readTree(completion.body()).get("object").asText());
        TestServers.Stream chat = TestServers.stream(SERVER.get(), "/v1/chat/completions", CHAT
                + "\"stream\":true,\"use_beam_search\":true}");
        assertEquals("data: [DONE]", chat.events().isEmpty() ? "" : "data: " + chat.events().get(chat.events().size() - 1).data(),
                "chat streams beam search as any other request");
        assertEquals("use_beam_search", refused("/v1/completions",
                "{\"prompt\":\"x\",\"use_beam_search\":\"yes\"}").get("param").asText());
    }

    @Test
    void logprobLimitsAndVocabularyErrorsCarryVllmsParameterAndValue() throws Exception {
        refusedAs("\"logprobs\":true,\"top_logprobs\":\"2\"", "`top_logprobs` must be an integer.", "top_logprobs");
        refusedAs("\"logprobs\":true,\"top_logprobs\":-2", "`top_logprobs` must be a positive value or -1.", "top_logprobs");
        refusedAs("\"top_logprobs\":-1", "when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");
        refusedAs("\"logprobs\":true,\"top_logprobs\":21",
                "Requested sample logprobs of 21, which is greater than max allowed: 20 (parameter=logprobs, value=21)", "logprobs");
        int size = PromptTokenizer.VOCABULARY_SIZE;
        refusedAs("\"logprobs\":true,\"top_logprobs\":-1", "Requested sample logprobs of " + size
                + ", which is greater than max allowed: 20 (parameter=logprobs, value=" + size + ")", "logprobs");
        accepted("/v1/chat/completions", CHAT + "\"logprobs\":true,\"top_logprobs\":20}");
        JsonNode e = refused("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"logprobs\":21}");
        assertEquals("Requested sample logprobs of 21, which is greater than max allowed: 20 (parameter=logprobs, value=21)",
                e.get("message").asText());
        assertEquals("logprobs", e.get("param").asText());
        e = refused("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"prompt_logprobs\":21}");
        assertEquals("Requested prompt logprobs of 21, which is greater than max allowed: 20 (parameter=prompt_logprobs, value=21)",
                e.get("message").asText());
        e = refused("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"logit_bias\":{\"999999\":5,\"7\":1}}");
        assertEquals("token_id(s) [999999] in logit_bias contain out-of-vocab token ids. Vocabulary size: " + size
                + " (parameter=logit_bias, value=[999999])", e.get("message").asText());
        assertEquals("logit_bias", e.get("param").asText());
    }
}
