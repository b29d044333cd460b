package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.routes.HttpBasics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad input gets OpenAI error JSON with the right status (never a 500); injected faults behave as advertised. */
class ErrorsAndFaultsTest {
    private static final String KEY = "sk-test";
    private static final String[] AUTH = {"authorization", "Bearer " + KEY};
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(16), 20).apiKey(KEY).maxBodyBytes(4096).build());

    private static JsonNode error(TestServers.Reply r, int status) throws Exception {
        assertEquals(status, r.status(), r.raw().body());
        assertEquals("application/json", r.header("content-type"));
        JsonNode e = r.json().get("error");
        assertTrue(e.get("message").isTextual() && e.get("type").isTextual() && e.has("param"), r.raw().body());
        assertEquals(status, e.get("code").asInt());
        return e;
    }

    private static TestServers.Reply chat(String body, String... extraHeaders) throws Exception {
        String[] headers = new String[AUTH.length + extraHeaders.length];
        System.arraycopy(AUTH, 0, headers, 0, AUTH.length);
        System.arraycopy(extraHeaders, 0, headers, AUTH.length, extraHeaders.length);
        return TestServers.post(SERVER.get(), "/v1/chat/completions", body, headers);
    }

    @Test
    void wrongTypesAre400NamingTheField() throws Exception {
        assertEquals("max_tokens", error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":\"ten\"}"), 400)
                .get("param").asText());
        assertEquals("n", error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"n\":\"two\"}"), 400).get("param").asText());
        assertEquals("stop", error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stop\":5}"), 400).get("param").asText());
        assertEquals("messages", error(chat("{\"messages\":[{\"role\":\"user\",\"content\":7}]}"), 400).get("param").asText());
        assertEquals("messages", error(chat("{\"model\":\"llama-3.1-8b\"}"), 400).get("param").asText());
        assertEquals("stream_options", error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                + "\"stream_options\":{\"include_usage\":true}}"), 400).get("param").asText());
        assertTrue(error(chat("{\"messages\": [oops"), 400).get("message").asText().startsWith("Invalid JSON body"));
        assertTrue(error(chat("[1,2]"), 400).get("message").asText().contains("JSON object"));
    }

    @Test
    void samplingLimitsAre400AsInVllm() throws Exception {
        String msg = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],";
        assertEquals("top_p", error(chat(msg + "\"top_p\":0}"), 400).get("param").asText());
        assertEquals(200, chat(msg + "\"top_p\":0.01,\"max_tokens\":2}").status());
        int len = SERVER.get().capacity().maxModelLen();
        JsonNode e = error(chat(msg + "\"min_tokens\":" + len + "}"), 400);
        assertEquals("min_tokens", e.get("param").asText());
        assertTrue(e.get("message").asText().startsWith("min_tokens must be less than or equal to max_tokens="), e.toString());
        assertEquals("min_tokens", error(chat(msg + "\"min_tokens\":5,\"max_tokens\":4}"), 400).get("param").asText());
    }

    @Test
    void tokenIdsOutsideTheVocabularyAre400() throws Exception {
        for (String prompt : List.of("[999999]", "[[1],[100256]]", "[100300]")) {
            JsonNode e = error(TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":" + prompt + ",\"max_tokens\":2}", AUTH), 400);
            assertEquals("prompt", e.get("param").asText());
            assertTrue(e.get("message").asText().contains("out of vocabulary"), e.toString());
        }
        assertEquals(200, TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":[100257,100264],\"max_tokens\":2}", AUTH).status());
        for (String mixed : List.of("[[1],\"a\"]", "[\"a\",[1]]")) {
            JsonNode e = error(TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":" + mixed + ",\"max_tokens\":2}", AUTH), 400);
            assertEquals("prompt", e.get("param").asText(), mixed);
        }
    }

    @Test
    void priorityIs400UnlessThePriorityPolicyIsOn() throws Exception {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":2,\"priority\":";
        JsonNode e = error(chat(body + "3}"), 400);
        assertEquals("priority", e.get("param").asText());
        assertEquals("Got priority 3 but Priority scheduling is not enabled.", e.get("message").asText());
        assertEquals(200, chat(body + "0}").status());
        MockServer priority = TestServers.start(TestServers.options(TestServers.llama8b(16), 20).schedulingPolicy("priority").build());
        try {
            assertEquals(200, TestServers.post(priority, "/v1/chat/completions", body + "3}").status());
        } finally {
            TestServers.close(priority);
        }
    }

    @Test
    void contextOverflowIs400BeforeAnyStreamStarts() throws Exception {
        int len = SERVER.get().capacity().maxModelLen();
        JsonNode e = error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":true,\"max_tokens\":" + len + "}"), 400);
        assertTrue(e.get("message").asText().startsWith("This model's maximum context length is " + len + " tokens"));
    }

    @Test
    void unknownModelIs404() throws Exception {
        assertEquals("model", error(chat("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"), 404)
                .get("param").asText());
    }

    @Test
    void missingOrWrongKeyIs401ButHealthAndMetricsStayOpen() throws Exception {
        error(TestServers.post(SERVER.get(), "/v1/chat/completions", "{}"), 401);
        error(TestServers.post(SERVER.get(), "/v1/completions", "{}", "authorization", "Bearer nope"), 401);
        error(TestServers.get(SERVER.get(), "/v1/models"), 401);
        assertEquals(200, TestServers.get(SERVER.get(), "/health").status());
        assertEquals(200, TestServers.get(SERVER.get(), "/metrics").status());
    }

    @Test
    void oversizedBodyIs413WrongMethodIs405UnknownRouteIs404() throws Exception {
        error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(5000) + "\"}]}"), 413);
        HttpResponse<String> put = TestServers.http().send(HttpRequest.newBuilder(URI.create(SERVER.get().baseUrl() + "/v1/completions"))
                .timeout(java.time.Duration.ofSeconds(30)).header("authorization", AUTH[1]).PUT(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, put.statusCode());
        error(TestServers.get(SERVER.get(), "/v2/nothing"), 404);
    }

    @Test
    void headerForcesEachErrorFaultWithItsStatus() throws Exception {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":2}";
        TestServers.Reply limited = chat(body, HttpBasics.FAULT_HEADER, "rate_limit");
        error(limited, 429);
        assertEquals("1", limited.header("retry-after"), "an injected 429 looks like a full queue");
        error(chat(body, HttpBasics.FAULT_HEADER, "server_error"), 500);
        error(chat(body, HttpBasics.FAULT_HEADER, "service_unavailable"), 503);
        error(chat(body, HttpBasics.FAULT_HEADER, "auth"), 401);
        error(chat(body, HttpBasics.FAULT_HEADER, "context_length"), 400);
        assertEquals(HttpBasics.FAULT_HEADER, error(chat(body, HttpBasics.FAULT_HEADER, "meteor"), 400).get("param").asText());
    }

    @Test
    void disconnectFaultCutsTheStreamAfterTheConfiguredTokens() throws Exception {
        String stream = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":50,\"ignore_eos\":true,\"stream\":true}";
        try (RawHttp h = RawHttp.post(SERVER.get(), "/v1/chat/completions", stream, AUTH[0], AUTH[1], HttpBasics.FAULT_HEADER, "disconnect")) {
            String all = h.readAll();
            assertFalse(all.contains("[DONE]"), all);
            assertEquals(1 + 3, all.lines().filter(l -> l.startsWith("data: ")).count(), all);
        }
    }

    @Test
    void stallFaultPausesTheStreamForStallMs() throws Exception {
        TestServers.Reply set = TestServers.post(SERVER.get(), "/admin/faults", "{\"stall_ms\":300,\"fault_after_tokens\":2}", AUTH);
        assertEquals(200, set.status(), set.raw().body());
        try {
            TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/chat/completions",
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":6,\"ignore_eos\":true,\"stream\":true}",
                    AUTH[0], AUTH[1], HttpBasics.FAULT_HEADER, "stall");
            List<TestServers.Event> e = s.events();
            assertEquals(1 + 6 + 1, e.size());
            long gapMs = (e.get(3).arrivedNanos() - e.get(2).arrivedNanos()) / 1_000_000;
            // The server holds 300 ms; the client may read the token before the stall a little late.
            assertTrue(gapMs >= 250, "stall after 2 tokens lasted " + gapMs + " ms");
        } finally {
            TestServers.post(SERVER.get(), "/admin/faults", "{\"stall_ms\":1000,\"fault_after_tokens\":3}", AUTH);
        }
    }

    @Test
    void slowFirstTokenFaultHoldsTheFirstTokenBack() throws Exception {
        TestServers.post(SERVER.get(), "/admin/faults", "{\"slow_first_token_ms\":300}", AUTH);
        try {
            long sent = System.nanoTime();
            TestServers.Stream s = TestServers.stream(SERVER.get(), "/v1/chat/completions",
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":3,\"ignore_eos\":true,\"stream\":true}",
                    AUTH[0], AUTH[1], HttpBasics.FAULT_HEADER, "slow_first_token");
            long firstMs = (s.events().get(0).arrivedNanos() - sent) / 1_000_000;
            assertTrue(firstMs >= 300, "first chunk after " + firstMs + " ms");
            assertEquals("[DONE]", s.events().get(s.events().size() - 1).data());
        } finally {
            TestServers.post(SERVER.get(), "/admin/faults", "{\"slow_first_token_ms\":2000}", AUTH);
        }
    }

    @Test
    void adminFaultsNeedsTheKeyAndChangesTheFailureRate() throws Exception {
        error(TestServers.post(SERVER.get(), "/admin/faults", "{\"failure_rate\":1}"), 401);
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":2}";
        try {
            JsonNode now = TestServers.post(SERVER.get(), "/admin/faults", "{\"failure_rate\":1,\"failure_types\":[\"server_error\"]}", AUTH).json();
            assertEquals(1.0, now.get("failure_rate").asDouble());
            error(chat(body), 500);
            error(TestServers.post(SERVER.get(), "/admin/faults", "{\"failure_types\":[\"meteor\"]}", AUTH), 400);
        } finally {
            TestServers.post(SERVER.get(), "/admin/faults", "{\"failure_rate\":0}", AUTH);
        }
        assertEquals(200, chat(body).status());
    }

    @Test
    void adminFaultsRefusesKeysItDoesNotKnow() throws Exception {
        // A misspelt key ("stall" for "stall_ms") must not be a silent no-op that leaves a test running without its fault.
        JsonNode e = error(TestServers.post(SERVER.get(), "/admin/faults", "{\"stall\":500}", AUTH), 400);
        assertEquals("stall", e.get("param").asText());
        assertEquals(1000, TestServers.get(SERVER.get(), "/admin/faults", AUTH).json().get("stall_ms").asInt());
    }

    @Test
    void modelsListsEveryFieldVllmSends() throws Exception {
        JsonNode m = TestServers.get(SERVER.get(), "/v1/models", AUTH).json().get("data").get(0);
        for (String field : List.of("id", "object", "created", "owned_by", "root", "parent", "max_model_len", "permission")) {
            assertTrue(m.has(field), field + " missing in " + m);
        }
        JsonNode p = m.get("permission");
        assertTrue(p.isArray() && p.size() == 1, m.toString());
        assertEquals("model_permission", p.get(0).get("object").asText());
        assertTrue(p.get(0).get("id").asText().startsWith("modelperm-"), p.toString());
        assertEquals("*", p.get(0).get("organization").asText());
        assertTrue(p.get(0).get("allow_sampling").asBoolean() && p.get(0).get("allow_logprobs").asBoolean(), p.toString());
    }

    /** The value of an unlabelled-by-reason series such as vllm:generation_tokens_total. */
    private static double metric(String series) throws Exception {
        String text = TestServers.get(SERVER.get(), "/metrics").raw().body();
        return text.lines().filter(l -> l.startsWith(series + "{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    private static double aborted() throws Exception {
        String text = TestServers.get(SERVER.get(), "/metrics").raw().body();
        return text.lines().filter(l -> l.startsWith("vllm:request_success_total{") && l.contains("finished_reason=\"abort\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    void disconnectFaultWithoutStreamDropsTheConnectionAfterTheConfiguredTokensAndAbortsTheRequest() throws Exception {
        // As documented and as a crashed backend: the connection drops after fault_after_tokens tokens, not after the
        // whole generation, and the engine stops (counted as abort), not a 'length' success that nobody received.
        double abortedBefore = aborted();
        double generatedBefore = metric("vllm:generation_tokens_total");
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":8000,\"ignore_eos\":true}";
        try (RawHttp h = RawHttp.post(SERVER.get(), "/v1/chat/completions", body, AUTH[0], AUTH[1], HttpBasics.FAULT_HEADER, "disconnect")) {
            String all = h.readAll();
            assertFalse(all.contains("200 OK"), all);
        }
        assertTrue(TestServers.eventually(10, () -> {
            try {
                return aborted() == abortedBefore + 1;
            } catch (Exception e) {
                return false;
            }
        }), "the dropped request was not counted as aborted");
        double generated = metric("vllm:generation_tokens_total") - generatedBefore;
        assertTrue(generated < 1000, generated + " tokens generated for a request dropped after 3");
    }
}
