package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.observe.TruthLog;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Starting mock servers and talking raw HTTP/SSE to them in tests. */
public final class TestServers {
    /**
     * A fresh client per call: tests start servers on ephemeral ports that the OS hands out again, and a client that
     * pooled a keep-alive connection to an earlier server on the same port could wait on it forever.
     */
    static HttpClient http() {
        return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    private TestServers() {
    }

    /** Llama 3.1 8B on one H100 with vLLM defaults except max-num-seqs. */
    public static Deployment llama8b(int maxNumSeqs) {
        return Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(maxNumSeqs).build();
    }

    public static ServerOptions.Builder options(Deployment d, double timeScale) {
        return ServerOptions.builder(d).port(0).timeScale(timeScale).eventLoops(2);
    }

    /** The official OpenAI Java SDK pointed at {@code server}, without retries so that every error reaches the test. */
    static OpenAIClient sdk(MockServer server, String apiKey) {
        return OpenAIOkHttpClient.builder().baseUrl(server.baseUrl() + "/v1").apiKey(apiKey).maxRetries(0).build();
    }

    public static MockServer start(ServerOptions options) throws Exception {
        return MockServer.start(options).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    public static void close(MockServer server) throws Exception {
        if (server != null) {
            server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** A whole (non-stream) response. */
    public record Reply(int status, HttpResponse<String> raw) {
        public JsonNode json() throws IOException {
            return Json.MAPPER.readTree(raw.body());
        }

        String header(String name) {
            return raw.headers().firstValue(name).orElse(null);
        }
    }

    public static Reply post(MockServer server, String path, String body, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.baseUrl() + path)).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body)).header("content-type", "application/json");
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        HttpResponse<String> r = http().send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(r.statusCode(), r);
    }

    public static Reply get(MockServer server, String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.baseUrl() + path)).timeout(Duration.ofSeconds(30)).GET();
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        HttpResponse<String> r = http().send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(r.statusCode(), r);
    }

    /** One SSE {@code data:} payload and the {@link System#nanoTime()} its line arrived. */
    public record Event(String data, long arrivedNanos) {
        public JsonNode json() throws IOException {
            return Json.MAPPER.readTree(data);
        }
    }

    /** A streamed response: status, headers and every data event in order (the body, when not SSE). */
    public record Stream(int status, HttpResponse<?> raw, List<Event> events, String body) {
    }

    public static Stream stream(MockServer server, String path, String body, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.baseUrl() + path)).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body)).header("content-type", "application/json");
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        HttpResponse<java.util.stream.Stream<String>> r = http().send(b.build(), HttpResponse.BodyHandlers.ofLines());
        List<Event> events = new ArrayList<>();
        StringBuilder all = new StringBuilder();
        try (java.util.stream.Stream<String> lines = r.body()) {
            Iterator<String> it = lines.iterator();
            while (it.hasNext()) {
                String line = it.next();
                long now = System.nanoTime();
                all.append(line).append('\n');
                if (line.startsWith("data: ")) {
                    events.add(new Event(line.substring(6), now));
                }
            }
        }
        return new Stream(r.statusCode(), r, events, all.toString());
    }

    /** Polls a condition every 5 ms for up to {@code seconds}. */
    /** The truth-log rows of {@code requestId} in {@code log}'s ring, once there are {@code count} (fails after 10 s). */
    static List<JsonNode> truthRows(TruthLog log, String requestId, int count) throws Exception {
        List<JsonNode> rows = new ArrayList<>();
        boolean found = eventually(10, () -> {
            rows.clear();
            for (String line : log.since(0, 10_000).body().split("\n")) {
                try {
                    JsonNode r = line.isEmpty() ? null : Json.MAPPER.readTree(line);
                    if (r != null && r.get("request_id").asText().equals(requestId)) {
                        rows.add(r);
                    }
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
            return rows.size() == count;
        });
        if (!found) {
            throw new AssertionError(count + " truth rows for " + requestId + " expected, found " + rows.size());
        }
        return rows;
    }

    public static boolean eventually(double seconds, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(5);
        }
        return condition.getAsBoolean();
    }
}
