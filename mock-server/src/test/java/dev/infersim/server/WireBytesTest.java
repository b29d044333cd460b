package dev.infersim.server;

import dev.infersim.engine.LoraConfig;
import dev.infersim.server.config.LoraModule;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.fleet.MockFleet;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.server.routes.HttpBasics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The bytes of every route's answer, held against recorded files: status, the headers a client reads, and the body
 * byte for byte, with only what differs from run to run masked (creation times, the timeline's milliseconds, the
 * random permission id of a model card). Each server answers a fixed sequence of requests with fixed request ids and
 * seeds, so the text, logprobs, usage and ground-truth counts are the same every run; only single-choice requests
 * stream, as the chunks of several choices interleave as the engine happens to run ahead of the event loop. A change
 * to how a route is written that changes its output fails here. To record the files again after a deliberate change
 * to the wire: {@code mvn -pl mock-server -am test -Dtest=WireBytesTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dwire.bytes.record=true}.
 */
class WireBytesTest {
    private static final String KEY = "sk-wire";
    private static final Path RECORDED = Path.of("src/test/resources/dev/infersim/server/wire-bytes");
    private static final List<String> HEADERS = List.of("content-type", "transfer-encoding", "retry-after", "connection",
            "x-infersim-replica", "x-infersim-truth-next", "x-infersim-truth-missed", "x-infersim-truth-dropped");
    private static final Pattern CREATED = Pattern.compile("\"(created|created_at)\":\\d+");
    private static final Pattern MILLIS = Pattern.compile("\"([a-z_]+_ms)\":(-?[0-9][0-9.E+-]*|\\[[^\\]]*\\])");
    private static final Pattern PERMISSION = Pattern.compile("modelperm-[0-9a-f]{32}");
    private static final Pattern PORT = Pattern.compile("(127\\.0\\.0\\.1:|\"port\":)\\d+");

    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    @TempDir
    Path dir;

    private final StringBuilder out = new StringBuilder();
    private MockServer server;
    private int seq;

    @Test
    void openAiAdminAndErrorRoutesAnswerTheRecordedBytes() throws Exception {
        server = SERVERS.start(TestServers.options(TestServers.llama8b(8).toBuilder().lora(LoraConfig.of(2, 16, 0)).build(), 1000)
                .seed(7).eventLoops(1).apiKey(KEY).runtimeLoraUpdating(true)
                .loraModules(List.of(LoraModule.parse("sql-lora=/adapters/sql")))
                .features(ModelFeatures.NONE.withSleepMode(true, true, 3.4))
                .truthLog(TruthLog.open(dir.resolve("truth.jsonl"), TruthLog.DEFAULT_RING_CHARS)).build());
        get("/v1/models");
        get("/version");
        get("/health");
        get("/health/ready");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],\"max_tokens\":5,"
                + "\"seed\":1,\"logprobs\":true,\"top_logprobs\":2}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\","
                + "\"content\":\"stream it\"}],\"max_tokens\":4,\"seed\":2,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"echo me\"}],\"max_tokens\":6,"
                + "\"seed\":3,\"echo\":true,\"stop\":[\"ipsum\"],\"infersim\":{\"token_times\":true}}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"stream stops\"}],\"max_tokens\":8,"
                + "\"seed\":4,\"stream\":true,\"stop\":\"or\",\"logprobs\":true}");
        post("/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":3,\"seed\":5,\"echo\":true,\"logprobs\":1,"
                + "\"prompt_logprobs\":1}");
        post("/v1/completions", "{\"prompt\":\"first prompt\",\"max_tokens\":3,\"seed\":6,\"stream\":true,\"logprobs\":2}");
        post("/v1/completions", "{\"prompt\":[\"first prompt\",\"second prompt\"],\"max_tokens\":3,\"seed\":6,\"n\":2}");
        post("/v1/completions", "{\"prompt\":[1,2,3,4],\"max_tokens\":2,\"model\":\"sql-lora\",\"seed\":7}");
        post("/v1/completions", "{\"prompt\":\"score only\",\"max_tokens\":0,\"echo\":true,\"logprobs\":0}");
        // a body over 64 KiB is parsed on a worker thread, and its echo written by one
        post("/v1/completions", "{\"prompt\":\"" + "lorem ipsum ".repeat(6000) + "\",\"max_tokens\":1,\"echo\":true,\"seed\":9}");
        post("/v1/completions", "{\"prompt\":\"beam\",\"max_tokens\":2,\"stream\":true,\"use_beam_search\":true,\"seed\":8}");
        post("/v1/messages", "{\"model\":\"llama-3.1-8b\",\"max_tokens\":4,\"system\":\"terse\",\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"hi\"}]}");
        post("/v1/messages", "{\"model\":\"llama-3.1-8b\",\"max_tokens\":4,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":"
                + "[{\"type\":\"text\",\"text\":\"stream\"}]}]}");
        post("/v1/messages", "{\"model\":\"llama-3.1-8b\",\"messages\":[{\"role\":\"user\",\"content\":\"no max\"}]}");
        post("/v1/responses", "{\"input\":\"tell me\",\"max_output_tokens\":4,\"instructions\":\"short\"}");
        post("/v1/responses", "{\"input\":[{\"role\":\"user\",\"content\":\"stream\"}],\"max_output_tokens\":3,\"stream\":true}");
        post("/v1/responses", "{\"input\":\"later\",\"background\":true}");
        post("/tokenize", "{\"messages\":[{\"role\":\"user\",\"content\":\"count me\"}],\"return_token_strs\":true}");
        post("/tokenize", "{\"prompt\":\"count me too\"}");
        post("/tokenize", "{\"model\":\"nobody\",\"prompt\":\"x\"}");
        post("/detokenize", "{\"tokens\":[9906,1917]}");
        post("/detokenize", "{\"tokens\":[\"a\"]}");
        // refusals, in OpenAI's error JSON
        post("/v1/chat/completions", "{\"messages\":");
        post("/v1/chat/completions", "[1]");
        post("/v1/chat/completions", "{\"model\":\"nobody\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
        post("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":2,\"min_tokens\":3}");
        post("/v1/completions", "{\"prompt\":\"x\",\"n\":2,\"temperature\":0}");
        post("/v1/completions", "{\"prompt\":\"x\",\"tools\":3}");
        post("/v1/completions", "{\"prompt\":\"x\",\"kv_transfer_params\":[]}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":\"xml\"}}");
        post("/v1/completions", "{\"prompt\":\"x\"}", HttpBasics.FAULT_HEADER, "rate_limit");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}", HttpBasics.FAULT_HEADER, "context_length");
        post("/v1/completions", "{\"prompt\":\"x\"}", HttpBasics.FAULT_HEADER, "meteor");
        post("/v1/completions", "{\"prompt\":\"x\"}", HttpBasics.DP_RANK_HEADER, "3");
        post("/v1/completions", "{\"prompt\":\"x\"}", HttpBasics.ROUTE_HEADER, "not json");
        send("POST", "/v1/completions", "{\"prompt\":\"x\"}", false);
        send("POST", "/v1/completions", "{\"prompt\":\"x\"}", false, "authorization", "bearer " + KEY);
        send("GET", "/v1/chat/completions", null, true);
        get("/v1/nowhere");
        rawHeaderTooLong();
        // admin and operations routes
        get("/admin/faults");
        post("/admin/faults", "{\"failure_rate\":0,\"stall_ms\":250}");
        post("/admin/faults", "{\"failure_rate\":2}");
        post("/admin/faults", "{\"failure_types\":[\"meteor\"]}");
        post("/admin/faults", "{\"stal_ms\":1}");
        send("GET", "/admin/faults", null, false);
        post("/v1/load_lora_adapter", "{\"lora_name\":\"code-lora\",\"lora_path\":\"/adapters/code\"}");
        post("/v1/load_lora_adapter", "{\"lora_name\":\"code-lora\",\"lora_path\":\"/adapters/code\"}");
        get("/v1/models");
        post("/v1/unload_lora_adapter", "{\"lora_name\":\"code-lora\"}");
        post("/v1/unload_lora_adapter", "{\"lora_name\":\"code-lora\"}");
        post("/reset_prefix_cache", "");
        post("/reset_prefix_cache?reset_running_requests=maybe", "");
        get("/infersim/truth?since=0&limit=2");
        get("/infersim/truth?since=-1");
        get("/infersim/truth?since=x");
        post("/sleep?level=1", "");
        get("/is_sleeping");
        post("/wake_up", "");
        get("/is_sleeping");
        post("/sleep?level=x", "");
        headersOnly("/metrics");
        assertRecorded("openai-admin-errors");
    }

    @Test
    void toolReasoningAndFormatReplies() throws Exception {
        server = SERVERS.start(TestServers.options(TestServers.llama8b(8), 1000).seed(11).eventLoops(1)
                .features(ModelFeatures.NONE.withTools("hermes", true, 1.0).withReasoning("deepseek_r1", 0.5)).build());
        String tools = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":"
                + "\"object\",\"properties\":{\"city\":{\"type\":\"string\"},\"days\":{\"type\":\"integer\",\"minimum\":1,"
                + "\"maximum\":7}},\"required\":[\"city\"]}}}]";
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"weather?\"}],\"max_tokens\":40,"
                + "\"seed\":1," + tools + "}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"weather?\"}],\"max_tokens\":40,"
                + "\"seed\":2,\"stream\":true,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}},"
                + tools + "}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"think\"}],\"max_tokens\":12,\"seed\":3}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"think\"}],\"max_tokens\":12,\"seed\":4,"
                + "\"stream\":true,\"include_reasoning\":false}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"json\"}],\"max_tokens\":60,\"seed\":5,"
                + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"w\",\"schema\":{\"type\":\"object\","
                + "\"properties\":{\"n\":{\"type\":\"number\"}},\"required\":[\"n\"]}}}}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tool_choice\":\"required\"}");
        post("/v1/responses", "{\"input\":\"weather?\",\"max_output_tokens\":40,\"tools\":[{\"type\":\"function\",\"name\":"
                + "\"get_weather\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}]}");
        post("/v1/responses", "{\"input\":\"weather?\",\"max_output_tokens\":40,\"stream\":true,\"tools\":[{\"type\":"
                + "\"function\",\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}]}");
        String weather = "\"model\":\"llama-3.1-8b\",\"max_tokens\":40,\"messages\":[{\"role\":\"user\",\"content\":"
                + "\"weather?\"}]";
        post("/v1/messages", "{" + weather + ",\"tools\":[{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\","
                + "\"properties\":{\"city\":{\"type\":\"string\"}}}}]}");
        post("/v1/messages", "{" + weather + ",\"stream\":true,\"tools\":[{\"name\":\"get_weather\",\"input_schema\":"
                + "{\"type\":\"object\"}}]}");
        assertRecorded("tools-reasoning");
    }

    @Test
    void embeddingsAndBodyLimit() throws Exception {
        server = SERVERS.start(TestServers.options(TestServers.llama8b(8), 1000).seed(13).eventLoops(1).maxBodyBytes(2048)
                .features(ModelFeatures.NONE.withRunner("pooling")).build());
        post("/v1/embeddings", "{\"input\":\"embed me\"}");
        post("/v1/embeddings", "{\"input\":[\"one\",\"two\"],\"encoding_format\":\"base64\"}");
        post("/v1/embeddings", "{\"input\":[]}");
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
        post("/v1/embeddings", "{\"input\":\"" + "x".repeat(4096) + "\"}");
        assertRecorded("embeddings");
    }

    @Test
    void fleetReplicasRoute() throws Exception {
        MockFleet fleet = MockFleet.start(TestServers.options(TestServers.llama8b(8), 1000).seed(17).eventLoops(1).build(), 1,
                Duration.ofSeconds(5), s -> { }).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        try {
            server = fleet.replicas().get(0);
            get("/admin/replicas");
            post("/admin/replicas", "{\"replicas\":0}");
            post("/admin/replicas", "{\"replica\":2}");
            post("/admin/replicas", "{}");
            post("/admin/replicas", "{\"replicas\":2}");
            get("/admin/replicas");
        } finally {
            fleet.close(Duration.ZERO).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        assertRecorded("fleet");
    }

    private void get(String path) throws Exception {
        send("GET", path, null, true);
    }

    private void post(String path, String body, String... headers) throws Exception {
        send("POST", path, body, true, headers);
    }

    private void send(String method, String path, String body, boolean auth, String... headers) throws Exception {
        String id = "wire-" + (++seq);
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.baseUrl() + path)).timeout(Duration.ofSeconds(30))
                .version(HttpClient.Version.HTTP_1_1).header("x-request-id", id)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("content-type", "application/json");
        }
        if (auth) {
            b.header("authorization", "Bearer " + KEY);
        }
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        HttpResponse<String> r = TestServers.http().send(b.build(), HttpResponse.BodyHandlers.ofString());
        out.append("### ").append(id).append(' ').append(method).append(' ').append(path);
        for (int i = 0; i < headers.length; i += 2) {
            out.append(" [").append(headers[i]).append(": ").append(headers[i + 1]).append(']');
        }
        out.append('\n').append(r.statusCode()).append('\n');
        for (String h : HEADERS) {
            r.headers().firstValue(h).ifPresent(v -> out.append(h).append(": ").append(v).append('\n'));
        }
        out.append(mask(r.body())).append("\n\n");
    }

    private void headersOnly(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.baseUrl() + path)).version(HttpClient.Version.HTTP_1_1)
                .timeout(Duration.ofSeconds(30)).GET().build();
        HttpResponse<String> r = TestServers.http().send(request, HttpResponse.BodyHandlers.ofString());
        out.append("### GET ").append(path).append(" (headers only)\n").append(r.statusCode()).append('\n')
                .append("content-type: ").append(r.headers().firstValue("content-type").orElse("")).append("\n\n");
    }

    /** A header line longer than the decoder takes: its own error JSON and the connection closed, read raw. */
    private void rawHeaderTooLong() throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(20_000);
            OutputStream o = s.getOutputStream();
            o.write(("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nx-long: " + "a".repeat(20_000) + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            o.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            in.transferTo(bytes);
            out.append("### raw GET /health with a 20,000-byte header\n").append(bytes.toString(StandardCharsets.UTF_8))
                    .append("\n\n");
        }
    }

    private static String mask(String body) {
        String s = CREATED.matcher(body).replaceAll("\"$1\":0");
        s = MILLIS.matcher(s).replaceAll("\"$1\":T");
        s = PERMISSION.matcher(s).replaceAll("modelperm-X");
        return PORT.matcher(s).replaceAll("$1P");
    }

    private void assertRecorded(String name) throws IOException {
        Path file = RECORDED.resolve(name + ".txt");
        String actual = out.toString();
        if (Boolean.getBoolean("wire.bytes.record")) {
            Files.createDirectories(RECORDED);
            Files.writeString(file, actual);
        }
        assertEquals(Files.readString(file), actual, "the answers differ from " + file);
    }
}
