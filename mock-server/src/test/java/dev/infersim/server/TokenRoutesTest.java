package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.engine.KvTransferLink;
import dev.infersim.server.config.KvTransferConfig;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The token-id routes against vLLM's answers as its source writes them ({@code vllm/entrypoints/serve/disagg/protocol.py},
 * {@code serving.py}, {@code serve/render/serving.py}, {@code kv_connector/v1/mooncake/mooncake_utils.py}): the keys
 * below are the pydantic models' fields in declaration order, which FastAPI keeps when it writes them.
 */
class TokenRoutesTest {
    /** GenerateRequest's fields, as a render returns them. */
    private static final List<String> GENERATE_REQUEST = List.of("request_id", "token_ids", "assistant_tokens_mask",
            "token_offsets", "features", "sampling_params", "model", "stream", "stream_options", "cache_salt", "priority",
            "kv_transfer_params");
    /** GenerateResponse's fields, as a non-streamed generate returns them. */
    private static final List<String> GENERATE_RESPONSE = List.of("request_id", "model", "created", "choices", "usage",
            "prompt_logprobs", "kv_transfer_params");
    private static final List<String> RESPONSE_CHOICE = List.of("index", "logprobs", "finish_reason", "token_ids",
            "routed_experts");
    private static final List<String> STREAM_RESPONSE = List.of("request_id", "choices", "usage");
    private static final PromptTokenizer TOKENIZER = new PromptTokenizer();

    private static MockServer server;
    private static TruthLog log;
    private static Path dir;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("token-routes");
        log = TruthLog.open(dir.resolve("truth.jsonl"), TruthLog.DEFAULT_RING_CHARS);
        server = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).truthLog(log).build());
    }

    @AfterAll
    static void stop() throws Exception {
        TestServers.close(server);
        log.close();
    }

    private static List<String> keys(JsonNode o) {
        List<String> out = new ArrayList<>();
        for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
            out.add(it.next());
        }
        return out;
    }

    private static List<Integer> ints(JsonNode array) {
        List<Integer> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asInt()));
        return out;
    }

    private static List<Integer> ints(int[] ids) {
        List<Integer> out = new ArrayList<>();
        for (int id : ids) {
            out.add(id);
        }
        return out;
    }

    @Test
    void completionsRenderAnswersOneGenerateRequestPerPrompt() throws Exception {
        TestServers.Reply r = TestServers.post(server, "/v1/completions/render", """
                {"model": "llama-3.1-8b", "prompt": ["Hello world", "Bye"], "max_tokens": 5, "seed": 7, "temperature": 0.5}""");
        assertEquals(200, r.status(), r.raw().body());
        JsonNode all = r.json();
        assertTrue(all.isArray() && all.size() == 2, all.toString());
        JsonNode first = all.get(0);
        assertEquals(GENERATE_REQUEST, keys(first));
        assertTrue(first.get("request_id").asText().startsWith("cmpl-"), first.toString());
        assertEquals(ints(TOKENIZER.encodePrompt("Hello world")), ints(first.get("token_ids")));
        assertEquals(ints(TOKENIZER.encodePrompt("Bye")), ints(all.get(1).get("token_ids")));
        JsonNode ids = TestServers.post(server, "/v1/completions/render", "{\"prompt\": [[1, 2, 3]]}").json();
        assertEquals(List.of(1, 2, 3), ints(ids.get(0).get("token_ids")), "a token-id prompt comes back as it was");
        JsonNode sp = first.get("sampling_params");
        assertEquals(5, sp.get("max_tokens").asInt());
        assertEquals(7, sp.get("seed").asLong());
        assertEquals(0.5, sp.get("temperature").asDouble());
        assertEquals(1, sp.get("n").asInt());
        assertEquals(0, sp.get("top_k").asInt(), "vLLM's default top_k");
        assertEquals("llama-3.1-8b", first.get("model").asText());
        assertTrue(first.get("features").isNull() && first.get("stream_options").isNull());
        assertEquals(0, first.get("priority").asInt());
        // completions' max_tokens defaults to 16, as vLLM's CompletionRequest
        JsonNode plain = TestServers.post(server, "/v1/completions/render", "{\"prompt\": \"Hi\"}").json().get(0);
        assertEquals(16, plain.get("sampling_params").get("max_tokens").asInt());
    }

    @Test
    void chatRenderAnswersOneRequestWhoseMaxTokensIsWhatTheContextLeaves() throws Exception {
        JsonNode g = TestServers.post(server, "/v1/chat/completions/render", """
                {"messages": [{"role": "user", "content": "Hello world"}], "stream": true,
                 "stream_options": {"include_usage": true}}""").json();
        assertEquals(GENERATE_REQUEST, keys(g));
        assertTrue(g.get("request_id").asText().startsWith("chatcmpl-"));
        int[] ids = TOKENIZER.applyChatTemplate(List.of(new PromptTokenizer.Message("user", "Hello world")));
        assertEquals(ints(ids), ints(g.get("token_ids")));
        assertEquals(server.capacity().maxModelLen() - ids.length, g.get("sampling_params").get("max_tokens").asInt());
        assertTrue(g.get("stream").asBoolean());
        assertTrue(g.get("stream_options").get("include_usage").asBoolean());
        assertTrue(g.get("model").isNull());
    }

    @Test
    void generateAnswersTokenIdsTheTruthLogHolds() throws Exception {
        TestServers.Reply r = TestServers.post(server, "/inference/v1/generate", """
                {"request_id": "gen-1", "token_ids": [9906, 1917, 13], "sampling_params": {"max_tokens": 4, "ignore_eos": true, "n": 2}}""");
        assertEquals(200, r.status(), r.raw().body());
        JsonNode body = r.json();
        assertEquals(GENERATE_RESPONSE, keys(body));
        assertEquals("generate-tokens-gen-1", body.get("request_id").asText());
        assertEquals(server.options().servedModelName(), body.get("model").asText());
        assertEquals(2, body.get("choices").size());
        JsonNode choice = body.get("choices").get(0);
        assertEquals(RESPONSE_CHOICE, keys(choice));
        assertEquals("length", choice.get("finish_reason").asText());
        assertEquals(4, choice.get("token_ids").size());
        assertEquals(3, body.get("usage").get("prompt_tokens").asInt());
        assertEquals(8, body.get("usage").get("completion_tokens").asInt());
        assertEquals(11, body.get("usage").get("total_tokens").asInt());
        assertTrue(body.get("kv_transfer_params").isNull());
        List<JsonNode> rows = rows("generate-tokens-gen-1", 2);
        for (JsonNode row : rows) {
            assertEquals("generate", row.get("api").asText());
            int index = row.get("index").asInt();
            assertEquals(ints(body.get("choices").get(index).get("token_ids")), ints(row.get("token_ids")));
        }
    }

    @Test
    void aStreamedGenerateSendsEachChoicesNewTokensThenTheUsage() throws Exception {
        TestServers.Stream s = TestServers.stream(server, "/inference/v1/generate", """
                {"token_ids": [9906, 1917], "sampling_params": {"max_tokens": 6, "ignore_eos": true}, "stream": true,
                 "stream_options": {"include_usage": true}}""", "x-request-id", "gen-stream");
        assertEquals(200, s.status());
        List<TestServers.Event> events = s.events();
        assertEquals("[DONE]", events.get(events.size() - 1).data());
        List<Integer> streamed = new ArrayList<>();
        for (TestServers.Event e : events.subList(0, events.size() - 2)) {
            JsonNode chunk = e.json();
            assertEquals(STREAM_RESPONSE, keys(chunk));
            assertEquals("generate-tokens-gen-stream", chunk.get("request_id").asText(), "x-request-id wins, as vLLM's");
            assertTrue(chunk.get("usage").isNull());
            streamed.addAll(ints(chunk.get("choices").get(0).get("token_ids")));
        }
        JsonNode last = events.get(events.size() - 3).json().get("choices").get(0);
        assertEquals("length", last.get("finish_reason").asText());
        JsonNode usage = events.get(events.size() - 2).json();
        assertEquals(0, usage.get("choices").size());
        assertEquals(6, usage.get("usage").get("completion_tokens").asInt());
        assertEquals(ints(rows("generate-tokens-gen-stream", 1).get(0).get("token_ids")), streamed);
    }

    @Test
    void whatARenderReturnsCanBeSentToGenerateAsItIs() throws Exception {
        JsonNode rendered = TestServers.post(server, "/v1/completions/render",
                "{\"prompt\": \"Once upon a time\", \"max_tokens\": 3}").json().get(0);
        ((ObjectNode) rendered.get("sampling_params")).put("ignore_eos", true);
        JsonNode body = TestServers.post(server, "/inference/v1/generate", rendered.toString()).json();
        assertEquals(3, body.get("usage").get("completion_tokens").asInt(), body.toString());
        assertEquals(rendered.get("token_ids").size(), body.get("usage").get("prompt_tokens").asInt());
    }

    @Test
    void aGenerateRequestVllmWouldRefuseIs400NamingTheField() throws Exception {
        TestServers.Reply missing = TestServers.post(server, "/inference/v1/generate", "{\"sampling_params\": {}}");
        assertEquals(400, missing.status());
        assertEquals("token_ids", missing.json().get("error").get("param").asText());
        TestServers.Reply negative = TestServers.post(server, "/inference/v1/generate",
                "{\"token_ids\": [1, -2], \"sampling_params\": {}}");
        assertEquals(400, negative.status());
        assertTrue(negative.json().get("error").get("message").asText().contains("negative"));
        TestServers.Reply noParams = TestServers.post(server, "/inference/v1/generate", "{\"token_ids\": [1]}");
        assertEquals("sampling_params", noParams.json().get("error").get("param").asText());
        TestServers.Reply tooMany = TestServers.post(server, "/inference/v1/generate",
                "{\"token_ids\": [1], \"sampling_params\": {\"n\": 9, \"temperature\": 1}}");
        assertEquals(400, tooMany.status());
        assertEquals("sampling_params.n must be at most the server's max_num_seqs (8), got 9.",
                tooMany.json().get("error").get("message").asText());
        assertEquals(404, TestServers.post(server, "/inference/v1/generate",
                "{\"model\": \"nope\", \"token_ids\": [1], \"sampling_params\": {}}").status());
    }

    @Test
    void mooncakesQueryIs503WithoutAConnectorAndNamesEachEnginesIdAndWorkerWithOne() throws Exception {
        TestServers.Reply none = TestServers.get(server, "/query");
        assertEquals(503, none.status());
        assertEquals("Mooncake prefiller worker topology is not ready.", none.json().get("detail").asText());
        MockServer prefill = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).dataParallelSize(2)
                .kvTransfer(new KvTransferConfig("kv_producer", null, 30, "127.0.0.1", 0, new KvTransferLink(50, 1))).build());
        try {
            JsonNode q = TestServers.get(prefill, "/query").json();
            assertEquals(List.of("0", "1"), keys(q));
            for (int rank = 0; rank < 2; rank++) {
                JsonNode e = q.get(Integer.toString(rank));
                assertEquals(List.of("engine_id", "worker_addr"), keys(e));
                assertEquals(prefill.kvEngineIds().get(rank), e.get("engine_id").asText());
                assertTrue(e.get("worker_addr").get("0").get("0").asText().matches("127\\.0\\.0\\.1:\\d+"), e.toString());
            }
        } finally {
            TestServers.close(prefill);
        }
    }

    /** The truth rows of {@code requestId}, once {@code count} are written. */
    private static List<JsonNode> rows(String requestId, int count) throws Exception {
        return TestServers.truthRows(log, requestId, count);
    }
}
