package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.NotFoundException;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.models.Model;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.LoraConfig;
import dev.infersim.server.config.LoraModule;
import dev.infersim.server.config.MetricsOptions;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockFleet;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.observe.LoraRequestStates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** LoRA adapters as vLLM serves them: flags, routes, model cards, the adapter limit per step, the metric gateways read. */
class LoraTest {
    private static final Pattern LORA_SERIES = Pattern.compile(
            "vllm:lora_requests_info\\{max_lora=\"(\\d+)\",waiting_lora_adapters=\"([^\"]*)\",running_lora_adapters=\"([^\"]*)\"} (\\S+)");

    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    private static Deployment lora(int maxLoras) {
        return TestServers.llama8b(64).toBuilder().lora(LoraConfig.of(maxLoras, 16, 0)).build();
    }

    private static MockServer start(int maxLoras, boolean runtimeUpdating, double timeScale) throws Exception {
        return SERVERS.start(TestServers.options(lora(maxLoras), timeScale).runtimeLoraUpdating(runtimeUpdating)
                .loraModules(List.of(LoraModule.parse("sql-lora=/adapters/sql"),
                        LoraModule.parse("{\"name\": \"chat-lora\", \"path\": \"/adapters/chat\", \"base_model_name\": \"llama-3.1-8b\"}")))
                .build());
    }

    @Test
    void theOpenAiSdkListsRunsStreamsLoadsAndUnloadsAdapters() throws Exception {
        MockServer server = start(2, true, 20);
        OpenAIClient client = TestServers.sdk(server, "unused");
        List<Model> models = client.models().list().data();
        assertEquals(List.of("llama-3.1-8b", "sql-lora", "chat-lora"), models.stream().map(Model::id).toList());
        JsonNode cards = TestServers.get(server, "/v1/models").json().get("data");
        assertTrue(cards.get(0).get("parent").isNull());
        assertEquals("llama-3.1-8b", cards.get(1).get("parent").asText());
        assertEquals("/adapters/sql", cards.get(1).get("root").asText());

        Completion c = client.completions().create(CompletionCreateParams.builder().model("sql-lora")
                .prompt("SELECT the rows").maxTokens(5).build());
        assertEquals("sql-lora", c.model());
        assertEquals("sql-lora", infersim(c._additionalProperties()).get("lora").asText());

        List<String> pieces = new ArrayList<>();
        ChatCompletionCreateParams chat = ChatCompletionCreateParams.builder().model("chat-lora")
                .addUserMessage("Hello there").maxCompletionTokens(6).putAdditionalBodyProperty("ignore_eos", JsonValue.from(true))
                .build();
        String[] truthLora = {null};
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(chat)) {
            stream.stream().forEach(chunk -> {
                assertEquals("chat-lora", chunk.model());
                chunk.choices().forEach(ch -> ch.delta().content().filter(s -> !s.isEmpty()).ifPresent(pieces::add));
                JsonValue truth = chunk._additionalProperties().get("infersim");
                if (truth != null) {
                    truthLora[0] = truth.toString();
                }
            });
        }
        assertEquals(6, pieces.size());
        assertTrue(truthLora[0].contains("lora=chat-lora"), truthLora[0]);

        TestServers.Reply loaded = TestServers.post(server, "/v1/load_lora_adapter",
                "{\"lora_name\": \"code-lora\", \"lora_path\": \"/adapters/code\"}");
        assertEquals(200, loaded.status());
        assertEquals("Success: LoRA adapter 'code-lora' added successfully.", loaded.raw().body());
        assertEquals("code-lora", client.models().list().data().get(3).id());
        assertEquals("code-lora", client.completions().create(CompletionCreateParams.builder().model("code-lora")
                .prompt("def f():").maxTokens(3).build()).model());

        TestServers.Reply unloaded = TestServers.post(server, "/v1/unload_lora_adapter", "{\"lora_name\": \"code-lora\"}");
        assertEquals(200, unloaded.status());
        assertEquals("Success: LoRA adapter 'code-lora' removed successfully.", unloaded.raw().body());
        assertThrows(NotFoundException.class, () -> client.completions().create(CompletionCreateParams.builder()
                .model("code-lora").prompt("def f():").maxTokens(3).build()));
        assertEquals(3, client.models().list().data().size());
    }

    @Test
    void theRoutesAnswerVllmsErrors() throws Exception {
        MockServer server = start(1, true, 20);
        assertError(TestServers.post(server, "/v1/load_lora_adapter", "{\"lora_name\": \"x\"}"), 400, "InvalidUserInput",
                "Both 'lora_name' and 'lora_path' must be provided.");
        assertError(TestServers.post(server, "/v1/load_lora_adapter", "{\"lora_name\": \"sql-lora\", \"lora_path\": \"/a\"}"), 400,
                "InvalidUserInput", "The lora adapter 'sql-lora' has already been loaded. If you want to load the adapter in "
                        + "place, set 'load_inplace' to True.");
        assertError(TestServers.post(server, "/v1/unload_lora_adapter", "{}"), 400, "InvalidUserInput",
                "'lora_name' needs to be provided to unload a LoRA adapter.");
        assertError(TestServers.post(server, "/v1/unload_lora_adapter", "{\"lora_name\": \"nope\"}"), 404, "NotFoundError",
                "The lora adapter 'nope' cannot be found.");
        assertError(TestServers.post(server, "/v1/completions", "{\"model\": \"nope\", \"prompt\": \"hi\"}"), 404,
                "NotFoundError", "The model `nope` does not exist.");
    }

    @Test
    void withoutRuntimeUpdatingTheRoutesDoNotExist() throws Exception {
        MockServer server = start(1, false, 20);
        assertEquals(404, TestServers.post(server, "/v1/load_lora_adapter", "{\"lora_name\": \"a\", \"lora_path\": \"/a\"}").status());
    }

    @Test
    void theMetricListsTheAdaptersWithRequestsAndMaxLoras() throws Exception {
        // slow enough that both requests are in the engine while /metrics is read
        MockServer server = start(1, false, 2);
        List<java.util.concurrent.CompletableFuture<java.net.http.HttpResponse<String>>> replies = new ArrayList<>();
        for (String adapter : List.of("sql-lora", "chat-lora")) {
            replies.add(TestServers.http().sendAsync(java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create(server.baseUrl() + "/v1/completions")).header("content-type", "application/json")
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"model\": \"" + adapter
                            + "\", \"prompt\": \"a\", \"max_tokens\": 300, \"ignore_eos\": true}")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()));
            Thread.sleep(50); // sql-lora arrives first
        }
        // as current vLLM, both labels list every adapter with an unfinished request, though chat-lora waits for the slot
        assertTrue(TestServers.eventually(10, () -> latest(metrics(server))
                .equals(List.of("1", "sql-lora,chat-lora", "sql-lora,chat-lora"))), metrics(server));
        Matcher m = LORA_SERIES.matcher(metrics(server));
        double newest = 0;
        while (m.find()) {
            newest = Math.max(newest, Double.parseDouble(m.group(4)));
        }
        assertTrue(Math.abs(newest - System.currentTimeMillis() / 1000.0) < 60, "a Unix time in seconds: " + newest);
        for (var reply : replies) {
            assertEquals(200, reply.get(30, java.util.concurrent.TimeUnit.SECONDS).statusCode());
        }
        assertEquals(List.of("1", "", ""), latest(metrics(server)), "no adapter runs or waits once both finished");
    }

    /**
     * Three adapters over two GPU slots: sql-lora and chat-lora run (sql-lora twice), code-lora waits for a slot. Current
     * vLLM ({@code vllm-project/vllm@9aaf83ef5}, {@code vllm/v1/metrics/stats.py} {@code LoRARequestStates
     * .update_scheduler_stats} and {@code vllm/v1/metrics/loggers.py} {@code PrometheusStatLogger.record}) writes
     * every adapter with an unfinished request into both dicts and joins their keys: both labels list all three, in
     * the order their first requests came. vLLM before PR #26801 ({@code @a98cc35c3}, {@code update_iteration_stats}),
     * and llm-d-inference-sim, list the adapters with a request in the running list and those with one waiting.
     */
    @ParameterizedTest(name = "lists by queue: {0}")
    @ValueSource(booleans = {false, true})
    void threeAdaptersOverTwoSlotsAreListedAsVllmsLoggerBuildsTheLists(boolean byQueue) throws Exception {
        // at a tenth of real time the four requests outlast the checks (at real time a loaded CI run saw two finish)
        MockServer server = SERVERS.start(TestServers.options(lora(2), 0.1).metrics(new MetricsOptions(byQueue))
                .loraModules(List.of(LoraModule.parse("sql-lora=/a"), LoraModule.parse("chat-lora=/b"),
                        LoraModule.parse("code-lora=/c"))).build());
        List<java.util.concurrent.CompletableFuture<java.net.http.HttpResponse<String>>> replies = new ArrayList<>();
        for (String adapter : List.of("sql-lora", "chat-lora", "sql-lora", "code-lora")) {
            replies.add(TestServers.http().sendAsync(java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create(server.baseUrl() + "/v1/completions")).header("content-type", "application/json")
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"model\": \"" + adapter
                            + "\", \"prompt\": \"a\", \"max_tokens\": 60, \"ignore_eos\": true}")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()));
            assertTrue(TestServers.eventually(10, () -> server.runningRequests() + server.waitingRequests() == replies.size()));
        }
        List<String> expected = byQueue ? List.of("2", "code-lora", "sql-lora,chat-lora")
                : List.of("2", "sql-lora,chat-lora,code-lora", "sql-lora,chat-lora,code-lora");
        assertTrue(TestServers.eventually(10, () -> latest(metrics(server)).equals(expected)), metrics(server));
        assertEquals(3, server.runningRequests(), "code-lora's request waits for a slot");
        for (var reply : replies) {
            assertEquals(200, reply.get(60, java.util.concurrent.TimeUnit.SECONDS).statusCode());
        }
        assertTrue(TestServers.eventually(10, () -> latest(metrics(server)).equals(List.of("2", "", ""))), metrics(server));
    }

    @Test
    void everyReplicaOfAFleetHasItsOwnAdapters() throws Exception {
        ServerOptions options = TestServers.options(lora(1), 20).runtimeLoraUpdating(true)
                .loraModules(List.of(LoraModule.parse("sql-lora=/adapters/sql"))).build();
        MockFleet fleet = MockFleet.start(options, 2, java.time.Duration.ofSeconds(5), s -> { })
                .toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
        try {
            MockServer first = fleet.replicas().get(0);
            MockServer second = fleet.replicas().get(1);
            assertEquals(200, TestServers.post(first, "/v1/load_lora_adapter",
                    "{\"lora_name\": \"code-lora\", \"lora_path\": \"/adapters/code\"}").status());
            String request = "{\"model\": \"code-lora\", \"prompt\": \"a\", \"max_tokens\": 2}";
            assertEquals(200, TestServers.post(first, "/v1/completions", request).status());
            assertEquals(404, TestServers.post(second, "/v1/completions", request).status());
            assertEquals(2, TestServers.get(second, "/v1/models").json().get("data").size());
        } finally {
            fleet.close(java.time.Duration.ofSeconds(5)).toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    @Test
    void everyDataParallelEngineLoadsAnAdapterIntoItsOwnSlot() throws Exception {
        MockServer server = SERVERS.start(TestServers.options(lora(1), 20).dataParallelSize(2)
                .loraModules(List.of(LoraModule.parse("sql-lora=/adapters/sql"))).build());
        double firstOnRank0 = prefillMs(server, 0);
        double secondOnRank0 = prefillMs(server, 0);
        double firstOnRank1 = prefillMs(server, 1);
        double copyMs = lora(1).lora().hostCopyNanos(lora(1).model(), 1) / 1e6;
        assertEquals(copyMs, firstOnRank0 - secondOnRank0, 0.01, "rank 0 copies the adapter to its slot once");
        assertEquals(firstOnRank0, firstOnRank1, 0.01, "rank 1 copies it to its own slot");
    }

    /** Model ms from scheduling to the first token of a short request on sql-lora pinned to a data-parallel rank. */
    private static double prefillMs(MockServer server, int rank) throws Exception {
        TestServers.Reply r = TestServers.post(server, "/v1/completions",
                "{\"model\": \"sql-lora\", \"prompt\": \"SELECT\", \"max_tokens\": 2}", "X-data-parallel-rank",
                String.valueOf(rank));
        assertEquals(200, r.status(), r.raw().body());
        JsonNode model = r.json().get("infersim").get("choices").get(0).get("model");
        return model.get("first_token_ms").asDouble() - model.get("scheduled_ms").asDouble();
    }

    @Test
    void goFloatWritesUnixTimesAsPrometheusClientDoes() {
        assertEquals("1.7326400001234e+09", LoraRequestStates.goFloat(1732640000.1234));
        assertEquals("1.73264e+09", LoraRequestStates.goFloat(1732640000.0));
        assertEquals("12.5", LoraRequestStates.goFloat(12.5));
    }

    @Test
    void loraModulesParseAsVllmDoes() {
        assertEquals(new LoraModule("a", "/p", null), LoraModule.parse("a=/p"));
        assertEquals(new LoraModule("a", "/p", "base"), LoraModule.parse("{\"name\":\"a\",\"path\":\"/p\",\"base_model_name\":\"base\"}"));
        assertThrows(IllegalArgumentException.class, () -> LoraModule.parse("{\"name\":\"a\"}"));
        assertThrows(IllegalArgumentException.class, () -> LoraModule.parse("nonsense"));
    }

    /** The label values (max_lora, waiting, running) of the newest vllm:lora_requests_info series. */
    private static List<String> latest(String metrics) {
        Matcher m = LORA_SERIES.matcher(metrics);
        double newest = -1;
        List<String> labels = List.of();
        while (m.find()) {
            double t = Double.parseDouble(m.group(4));
            if (t >= newest) {
                newest = t;
                labels = List.of(m.group(1), m.group(2), m.group(3));
            }
        }
        return labels;
    }

    private static String metrics(MockServer server) {
        try {
            return TestServers.get(server, "/metrics").raw().body();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode infersim(Map<String, JsonValue> properties) throws Exception {
        return Json.MAPPER.readTree(Json.MAPPER.writeValueAsString(properties.get("infersim")));
    }

    private static void assertError(TestServers.Reply reply, int status, String type, String message) throws Exception {
        assertEquals(status, reply.status(), reply.raw().body());
        JsonNode error = reply.json().get("error");
        assertEquals(type, error.get("type").asText());
        assertEquals(message, error.get("message").asText());
        assertEquals(status, error.get("code").asInt());
    }
}
