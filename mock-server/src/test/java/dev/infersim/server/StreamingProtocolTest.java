package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.workload.length.FixedLength;
import dev.infersim.server.config.OutputMode;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The byte-level SSE protocol and the request fields vLLM honours. */
class StreamingProtocolTest {
    @RegisterExtension
    static final MockServerExtension LOREM = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(64), 50).seed(7).build());
    @RegisterExtension
    static final MockServerExtension ECHO = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(64), 50).outputMode(OutputMode.ECHO).build());
    private static final PromptTokenizer TOKENIZER = new PromptTokenizer();

    @Test
    void chatStreamIsRoleChunkThenOneTokenPerChunkThenUsageThenDone() throws Exception {
        TestServers.Stream s = TestServers.stream(LOREM.get(), "/v1/chat/completions", """
                {"model":"llama-3.1-8b","messages":[{"role":"user","content":"hi"}],"max_tokens":9,"ignore_eos":true,
                 "stream":true,"stream_options":{"include_usage":true}}""");
        assertEquals(200, s.status());
        assertEquals("text/event-stream; charset=utf-8", s.raw().headers().firstValue("content-type").orElseThrow());
        String requestId = s.raw().headers().firstValue("x-request-id").orElseThrow();
        List<TestServers.Event> events = s.events();
        assertEquals(1 + 9 + 1 + 1, events.size(), s.body());
        assertEquals("[DONE]", events.get(events.size() - 1).data());
        JsonNode role = events.get(0).json();
        assertEquals("chat.completion.chunk", role.get("object").asText());
        assertEquals("chatcmpl-" + requestId, role.get("id").asText());
        assertEquals("assistant", role.at("/choices/0/delta/role").asText());
        assertEquals("", role.at("/choices/0/delta/content").asText());
        assertTrue(role.at("/choices/0/finish_reason").isNull());
        StringBuilder text = new StringBuilder();
        for (int i = 1; i <= 9; i++) {
            JsonNode chunk = events.get(i).json();
            String piece = chunk.at("/choices/0/delta/content").asText();
            assertEquals(1, TOKENIZER.encode(piece).length, "one token per chunk: '" + piece + "'");
            text.append(piece);
            assertEquals(i == 9 ? "length" : null, chunk.at("/choices/0/finish_reason").textValue());
            assertFalse(chunk.has("usage"));
        }
        assertEquals(9, TOKENIZER.encode(text.toString()).length);
        JsonNode usage = events.get(10).json();
        assertEquals(0, usage.get("choices").size());
        assertEquals(9, usage.at("/usage/completion_tokens").asInt());
        assertEquals(usage.at("/usage/prompt_tokens").asInt() + 9, usage.at("/usage/total_tokens").asInt());
        JsonNode truth = usage.get("infersim");
        assertEquals(requestId, truth.get("request_id").asText());
        JsonNode model = truth.at("/choices/0/model");
        assertTrue(model.get("first_token_ms").asDouble() >= model.get("scheduled_ms").asDouble());
        assertTrue(model.get("finished_ms").asDouble() > model.get("first_token_ms").asDouble());
        assertEquals(model.get("e2e_ms").asDouble() / 50, truth.at("/choices/0/wall/e2e_ms").asDouble(), 1e-6);
        assertTrue(s.body().contains("}\n\ndata: "), "events are separated by a blank line");
    }

    @Test
    void completionStreamChunksCarryTextAndStopReasonAndNullUsage() throws Exception {
        TestServers.Stream s = TestServers.stream(LOREM.get(), "/v1/completions", """
                {"prompt":"Once","max_tokens":4,"ignore_eos":true,"stream":true}""");
        List<TestServers.Event> events = s.events();
        assertEquals(4 + 1, events.size());
        JsonNode first = events.get(0).json();
        assertEquals("text_completion", first.get("object").asText());
        assertTrue(first.at("/choices/0/text").isTextual());
        assertTrue(first.has("usage") && first.get("usage").isNull());
        assertTrue(first.at("/choices/0/stop_reason").isNull());
        JsonNode last = events.get(3).json();
        assertEquals("length", last.at("/choices/0/finish_reason").asText());
        assertNotNull(last.get("infersim"), "the final chunk carries the ground truth");
    }

    @Test
    void aClientRequestIdWithQuotesStillGivesValidJsonChunks() throws Exception {
        String requestId = "gw \"7\" \\ a";
        TestServers.Stream s = TestServers.stream(LOREM.get(), "/v1/chat/completions", """
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"ignore_eos":true,"stream":true}""",
                "x-request-id", requestId);
        assertEquals(1 + 2 + 1, s.events().size(), s.body());
        for (TestServers.Event e : s.events().subList(0, 3)) {
            assertEquals("chatcmpl-" + requestId, e.json().get("id").asText());
        }
    }

    @Test
    void continuousUsageStatsCountsTokensSoFar() throws Exception {
        TestServers.Stream s = TestServers.stream(LOREM.get(), "/v1/completions", """
                {"prompt":"Once","max_tokens":3,"ignore_eos":true,"stream":true,
                 "stream_options":{"include_usage":true,"continuous_usage_stats":true}}""");
        for (int i = 0; i < 3; i++) {
            assertEquals(i + 1, s.events().get(i).json().at("/usage/completion_tokens").asInt());
        }
    }

    @Test
    void continuousUsageStatsStartWithTheChatRoleChunk() throws Exception {
        TestServers.Stream s = TestServers.stream(LOREM.get(), "/v1/chat/completions", """
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"ignore_eos":true,"stream":true,
                 "stream_options":{"continuous_usage_stats":true}}""");
        assertEquals(1 + 2 + 1, s.events().size(), s.body());
        for (int i = 0; i < 3; i++) {
            JsonNode usage = s.events().get(i).json().get("usage");
            assertNotNull(usage, "chunk " + i + " has no usage: " + s.events().get(i).data());
            assertEquals(i, usage.get("completion_tokens").asInt());
            assertEquals(usage.get("prompt_tokens").asInt() + i, usage.get("total_tokens").asInt());
        }
    }

    @Test
    void seedMakesTextDeterministicAndDifferentSeedsDiffer() throws Exception {
        String body = "{\"prompt\":\"x\",\"max_tokens\":30,\"ignore_eos\":true,\"seed\":%d}";
        String a = TestServers.post(LOREM.get(), "/v1/completions", body.formatted(11)).json().at("/choices/0/text").asText();
        String b = TestServers.post(LOREM.get(), "/v1/completions", body.formatted(11)).json().at("/choices/0/text").asText();
        String c = TestServers.post(LOREM.get(), "/v1/completions", body.formatted(12)).json().at("/choices/0/text").asText();
        assertEquals(a, b);
        assertNotEquals(a, c);
    }

    @Test
    void stopStringEndsTheOutputBeforeItWithStopReason() throws Exception {
        JsonNode r = TestServers.post(ECHO.get(), "/v1/completions", """
                {"prompt":"alpha beta gamma delta","max_tokens":40,"ignore_eos":true,"stop":[" gamma"]}""").json();
        assertEquals("alpha beta", r.at("/choices/0/text").asText());
        assertEquals("stop", r.at("/choices/0/finish_reason").asText());
        assertEquals(" gamma", r.at("/choices/0/stop_reason").asText());
        assertEquals(TOKENIZER.encode("alpha beta gamma").length, r.at("/usage/completion_tokens").asInt());
    }

    @Test
    void aStreamHoldsBackWhatCouldStartAStopStringAndEndsWithTheTextBeforeIt() throws Exception {
        TestServers.Stream s = TestServers.stream(ECHO.get(), "/v1/completions", """
                {"prompt":"alpha beta gamma delta","max_tokens":40,"ignore_eos":true,"stop":[" gamma", "zz"],"stream":true}""");
        List<String> texts = new java.util.ArrayList<>();
        for (TestServers.Event e : s.events().subList(0, s.events().size() - 1)) {
            texts.add(Json.MAPPER.readTree(e.data()).at("/choices/0/text").asText());
        }
        // vLLM's detokenizer holds back (longest stop - 1) = 5 characters until the finish: "alpha" waits for " beta"
        assertEquals(List.of("", "alpha", " beta"), texts, s.body());
        JsonNode last = Json.MAPPER.readTree(s.events().get(s.events().size() - 2).data());
        assertEquals("stop", last.at("/choices/0/finish_reason").asText());
        assertEquals(" gamma", last.at("/choices/0/stop_reason").asText());
        assertEquals(3, last.at("/infersim/choices/0/completion_tokens").asInt());
    }

    @Test
    void minTokensHoldsBackTheEndAndMaxTokensCapsIt() throws Exception {
        ServerOptions o = TestServers.options(TestServers.llama8b(8), 50).eosPosition(new FixedLength(3)).build();
        MockServer fixed = TestServers.start(o);
        try {
            JsonNode plain = TestServers.post(fixed, "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":10}").json();
            assertEquals(3, plain.at("/usage/completion_tokens").asInt());
            assertEquals("stop", plain.at("/choices/0/finish_reason").asText());
            JsonNode held = TestServers.post(fixed, "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":10,\"min_tokens\":6}").json();
            assertEquals(6, held.at("/usage/completion_tokens").asInt());
            JsonNode capped = TestServers.post(fixed, "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2}").json();
            assertEquals(2, capped.at("/usage/completion_tokens").asInt());
            assertEquals("length", capped.at("/choices/0/finish_reason").asText());
        } finally {
            TestServers.close(fixed);
        }
    }

    @Test
    void choicesAndLaterRequestsPassThePromptIdsToThePrefixCache() throws Exception {
        String body = "{\"prompt\":\"" + "word ".repeat(200) + "\",\"max_tokens\":5,\"ignore_eos\":true,\"n\":3}";
        JsonNode first = TestServers.post(LOREM.get(), "/v1/completions", body).json();
        assertEquals(3, first.get("choices").size());
        assertEquals(15, first.at("/usage/completion_tokens").asInt());
        JsonNode again = TestServers.post(LOREM.get(), "/v1/completions", body).json();
        for (JsonNode c : again.at("/infersim/choices")) {
            assertEquals(192, c.get("cached_prompt_tokens").asInt(), "12 full blocks of 16 of the 201-token prompt are cached");
        }
    }

    @Test
    void promptMayBeTokenIdsOrAListOfStrings() throws Exception {
        JsonNode ids = TestServers.post(LOREM.get(), "/v1/completions", "{\"prompt\":[9906,1917,0],\"max_tokens\":2}").json();
        assertEquals(3, ids.at("/usage/prompt_tokens").asInt());
        JsonNode list = TestServers.post(LOREM.get(), "/v1/completions", "{\"prompt\":[\"Hello\",\"Hello world\"],\"max_tokens\":2}").json();
        assertEquals(2, list.get("choices").size());
        assertEquals(3, list.at("/usage/prompt_tokens").asInt());
    }

    @Test
    void logprobsAreWellFormedForChatAndCompletions() throws Exception {
        JsonNode chat = TestServers.post(LOREM.get(), "/v1/chat/completions", """
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"ignore_eos":true,"logprobs":true,"top_logprobs":2}""").json();
        JsonNode content = chat.at("/choices/0/logprobs/content");
        assertEquals(3, content.size());
        JsonNode t = content.get(0);
        assertTrue(t.get("logprob").asDouble() <= 0);
        assertEquals(2, t.get("top_logprobs").size());
        assertTrue(t.at("/top_logprobs/0/logprob").asDouble() >= t.at("/top_logprobs/1/logprob").asDouble());
        JsonNode text = TestServers.post(LOREM.get(), "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":3,\"ignore_eos\":true,\"logprobs\":1}").json();
        assertEquals(3, text.at("/choices/0/logprobs/tokens").size());
        assertEquals(3, text.at("/choices/0/logprobs/token_logprobs").size());
    }

    @Test
    void tokenizeCountsAConversationLongerThanTheModelAndIgnoresCompletionFields() throws Exception {
        int len = LOREM.get().capacity().maxModelLen();
        String content = "hi" + " hi".repeat(len);
        TestServers.Reply r = TestServers.post(LOREM.get(), "/tokenize", "{\"messages\":[{\"role\":\"user\",\"content\":\"" + content
                + "\"}],\"max_completion_tokens\":" + len + ",\"n\":0}");
        assertEquals(200, r.status(), r.raw().body().substring(0, Math.min(300, r.raw().body().length())));
        assertEquals(TOKENIZER.applyChatTemplate(List.of(new PromptTokenizer.Message("user", content))).length,
                r.json().get("count").asInt());
    }

    @Test
    void tokenizeAndDetokenizeRoundTrip() throws Exception {
        JsonNode tok = TestServers.post(LOREM.get(), "/tokenize", "{\"prompt\":\"Hello world\"}").json();
        assertEquals(2, tok.get("count").asInt());
        assertEquals(LOREM.get().capacity().maxModelLen(), tok.get("max_model_len").asInt());
        JsonNode detok = TestServers.post(LOREM.get(), "/detokenize", "{\"tokens\":" + tok.get("tokens") + "}").json();
        assertEquals("Hello world", detok.get("prompt").asText());
        JsonNode chat = TestServers.post(LOREM.get(), "/tokenize", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hello world\"}]}").json();
        assertEquals(TOKENIZER.applyChatTemplate(List.of(new PromptTokenizer.Message("user", "Hello world"))).length,
                chat.get("count").asInt());
        // vLLM's form: a vLLM release a client can parse as one, infersim's own version beside it
        JsonNode version = TestServers.get(LOREM.get(), "/version").json();
        assertTrue(version.get("version").asText().matches("0\\.\\d+\\.\\d+"), version.toString());
        assertTrue(version.get("infersim_version").isTextual(), version.toString());
        assertEquals(200, TestServers.get(LOREM.get(), "/health").status());
    }
}
