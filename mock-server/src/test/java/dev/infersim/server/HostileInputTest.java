package dev.infersim.server;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.text.PromptTokenizer;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One request that once stalled an event loop or ran the heap out, per test, against a server with a single event loop
 * (every connection shares it): each gets a complete, bounded answer while a probe connection keeps being served, and
 * the loop never runs more than {@value #STALL_LIMIT_MS} ms of CPU without coming back ({@link EventLoopStallDetector}).
 */
class HostileInputTest {
    /** The longest the event loop may work without serving its other connections. */
    static final double STALL_LIMIT_MS = 100;
    private static final PromptTokenizer TOKENIZER = new PromptTokenizer();

    private Vertx vertx;
    private MockServer server;
    private EventLoopStallDetector stalls;
    private Probe probe;

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        ServerOptions o = TestServers.options(TestServers.llama8b(64), 1000).eventLoops(1).build();
        server = MockServer.start(vertx, o, new RooflineCostModel(o.deployment())).toCompletionStage().toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
        stalls = new EventLoopStallDetector(vertx);
        // warm up the paths the tests take (class loading and first compilations are not what is measured)
        TestServers.post(server, "/v1/completions", "{\"prompt\":\"warm up\",\"max_tokens\":4,\"logprobs\":2,\"echo\":true,"
                + "\"prompt_logprobs\":2,\"stop\":[\"zz\"]}");
        TestServers.stream(server, "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"max_tokens\":4,\"stream\":true,\"logprobs\":true,\"top_logprobs\":2,\"stop\":\"zz\"}");
        probe = new Probe(server);
        stalls.reset();
    }

    @AfterEach
    void stop() throws Exception {
        probe.close();
        stalls.close();
        TestServers.close(server);
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void tenThousandStopStringsOnALongGenerationCostTheEventLoopNothing() throws Exception {
        StringBuilder stops = new StringBuilder();
        for (int i = 0; i < 10_000; i++) {
            stops.append(i == 0 ? "" : ",").append("\"never-").append(i).append("-zq\"");
        }
        String body = "{\"prompt\":\"x\",\"max_tokens\":100000,\"n\":4,\"temperature\":1,\"stream\":true,\"stop\":[" + stops + "]}";
        try (RawHttp stream = RawHttp.post(server, "/v1/completions", body)) {
            for (int i = 0; i < 50; i++) {
                assertNotNull(stream.readUntil("data: "), "token chunk " + i);
            }
        }
        assertQuiet();
    }

    @Test
    void tenThousandStopSequencesCutAMessagesStreamAndAnswerAtTheMatchWithoutCostingTheEventLoop() throws Exception {
        String stops = manyStops("\"e\"");
        String body = "{\"model\":\"llama-3.1-8b\",\"max_tokens\":100000,\"stop_sequences\":[" + stops + "],"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
        TestServers.Stream s = TestServers.stream(server, "/v1/messages", body + ",\"stream\":true}");
        assertEquals(200, s.status());
        StringBuilder text = new StringBuilder();
        JsonNode delta = null;
        for (TestServers.Event e : s.events()) {
            JsonNode j = e.json();
            text.append(j.at("/delta/text").asText(""));
            delta = j.path("type").asText().equals("message_delta") ? j.get("delta") : delta;
        }
        assertFalse(text.toString().contains("e"), "streamed past the stop sequence: " + text);
        assertNotNull(delta, s.body());
        assertEquals("stop_sequence", delta.path("stop_reason").asText(), delta.toString());
        assertEquals("e", delta.path("stop_sequence").asText(), delta.toString());
        JsonNode whole = TestServers.post(server, "/v1/messages", body + "}").json();
        assertEquals("stop_sequence", whole.path("stop_reason").asText(), whole.toString());
        assertEquals("e", whole.path("stop_sequence").asText(), whole.toString());
        assertFalse(whole.at("/content/0/text").asText("").contains("e"), whole.toString());
        assertTrue(whole.at("/usage/output_tokens").asInt() < 100, "stopped at the match: " + whole);
        assertQuiet();
    }

    @Test
    void tenThousandStopStringsCutAResponsesStreamWhereItsFinalTextEndsWithoutCostingTheEventLoop() throws Exception {
        String body = "{\"max_output_tokens\":100000,\"stop\":[" + manyStops("\"e\"") + "],\"input\":\"hi\",\"stream\":true}";
        TestServers.Stream s = TestServers.stream(server, "/v1/responses", body);
        assertEquals(200, s.status());
        StringBuilder deltas = new StringBuilder();
        String done = null;
        for (TestServers.Event e : s.events()) {
            JsonNode j = e.json();
            switch (j.path("type").asText()) {
                case "response.output_text.delta" -> deltas.append(j.path("delta").asText());
                case "response.output_text.done" -> done = j.path("text").asText();
                default -> { }
            }
        }
        assertFalse(deltas.toString().contains("e"), "streamed past the stop string: " + deltas);
        if (done != null) {
            assertEquals(done, deltas.toString(), "the deltas add up to the final text");
        }
        assertTrue(s.events().get(s.events().size() - 1).json().at("/response/usage/output_tokens").asInt() < 100, s.body());
        assertQuiet();
    }

    @Test
    void responsesEchoingTwelveMegabytesOfToolsAreWrittenOffTheEventLoop() throws Exception {
        String tool = "{\"type\":\"function\",\"name\":\"f\",\"description\":\"" + "d".repeat(1000) + "\",\"parameters\":{\"type\":\"object\"}}";
        int tools = 12_000;
        String body = "{\"max_output_tokens\":3,\"tool_choice\":\"none\",\"tools\":[" + String.join(",", java.util.Collections.nCopies(tools, tool))
                + "],\"input\":\"hi\"";
        // the echo's own path warmed first with a tenth of it, as the other paths are in start(): what is judged is the
        // loop's stretch on a warm server (two loaded CI runs saw a cold first echo take 108-136 ms of the loop's CPU)
        TestServers.post(server, "/v1/responses", "{\"max_output_tokens\":3,\"tool_choice\":\"none\",\"tools\":["
                + String.join(",", java.util.Collections.nCopies(tools / 10, tool)) + "],\"input\":\"hi\",\"stream\":true}");
        stalls.reset();
        // streamed: response.created, .in_progress and .completed each echo every tool
        HttpResponse<InputStream> r = TestServers.http().send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/responses"))
                .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body + ",\"stream\":true}")).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        List<String> echoing = new java.util.ArrayList<>();
        String completed = null;
        try (java.io.BufferedReader lines = new java.io.BufferedReader(new java.io.InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.startsWith("data: ") && line.length() > 1_000_000) {
                    JsonNode event = Json.MAPPER.readTree(line.substring(6));
                    echoing.add(event.path("type").asText() + " " + event.at("/response/tools").size());
                    completed = event.path("type").asText().equals("response.completed") ? line : completed;
                }
            }
        }
        assertEquals(List.of("response.created " + tools, "response.in_progress " + tools, "response.completed " + tools), echoing);
        assertEquals("incomplete", Json.MAPPER.readTree(completed.substring(6)).at("/response/status").asText());
        // whole
        TestServers.Reply whole = TestServers.post(server, "/v1/responses", body + "}");
        assertEquals(200, whole.status());
        assertEquals(tools, whole.json().path("tools").size());
        assertQuiet();
    }

    @Test
    void aMessagesBodyNearTheSizeLimitIsTranslatedOffTheEventLoop() throws Exception {
        String block = "{\"type\":\"text\",\"text\":\"word word word\"}";
        String body = "{\"model\":\"llama-3.1-8b\",\"max_tokens\":3,\"messages\":[{\"role\":\"user\",\"content\":["
                + String.join(",", java.util.Collections.nCopies(395_000, block)) + "]}]}";
        assertTrue(body.length() > 15 << 20 && body.length() < 16 << 20, "near the 16 MiB limit: " + body.length());
        TestServers.Reply r = TestServers.post(server, "/v1/messages", body);
        assertEquals(400, r.status(), "longer than the context");
        assertTrue(r.json().at("/error/message").asText().contains("maximum context length"), r.raw().body());
        assertQuiet();
    }

    /** 9,999 stop strings that never match, then {@code last}: a JSON list's items. */
    private static String manyStops(String last) {
        StringBuilder stops = new StringBuilder();
        for (int i = 1; i < 10_000; i++) {
            stops.append("\"never-").append(i).append("-zq\",");
        }
        return stops.append(last).toString();
    }

    @Test
    void promptLogprobsOfALongPromptAreWrittenOffTheEventLoopAndComplete() throws Exception {
        int tokens = 30_000;
        String body = "{\"prompt\":\"" + "word ".repeat(tokens - 1) + "word\",\"max_tokens\":1,\"prompt_logprobs\":20}";
        HttpResponse<InputStream> r = TestServers.http().send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/completions"))
                .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("content-length").isEmpty(), "written in chunks as it is made, not whole");
        assertEquals(tokens, countPromptLogprobs(r.body()));
        assertQuiet();
    }

    @Test
    void anEchoedPromptsLogprobsInAStreamsFirstChunkAreWrittenOffTheEventLoop() throws Exception {
        int tokens = 30_000;
        String body = "{\"prompt\":\"" + "word ".repeat(tokens - 1) + "word\",\"max_tokens\":3,\"echo\":true,\"logprobs\":20,"
                + "\"stream\":true}";
        TestServers.Stream s = TestServers.stream(server, "/v1/completions", body);
        assertEquals(200, s.status());
        assertEquals(4, s.events().size(), "three token chunks and [DONE]");
        assertEquals(tokens + 1, s.events().get(0).json().at("/choices/0/logprobs/tokens").size(), "the prompt and the first token");
        assertEquals(1, s.events().get(1).json().at("/choices/0/logprobs/tokens").size());
        assertEquals("length", s.events().get(2).json().at("/choices/0/finish_reason").asText());
        assertQuiet();
    }

    @Test
    void aFramingRefusedOnAConnectionsFirstRequestIsRefusedOnEveryLaterOneToo() throws Exception {
        String body = "{\"prompt\":\"hi\",\"max_tokens\":2}";
        String served = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length() + "\r\n\r\n" + body;
        String chunks = Integer.toHexString(body.length()) + "\r\n" + body + "\r\n0\r\n\r\n";
        String head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
        String[][] refusals = {
            {head + "X-Folded: a\r\n b\r\nContent-Length: " + body.length() + "\r\n\r\n" + body, "obsolete line folding"},
            {head + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks, "both Content-Length and Transfer-Encoding"},
            {head + "Content-Length: " + body.length() + "\r\nTransfer-Encoding: identity\r\n\r\n" + body,
                "both Content-Length and Transfer-Encoding"},
            {head.replace("HTTP/1.1", "HTTP/1.0") + "Transfer-Encoding: chunked\r\n\r\n" + chunks, "in an HTTP/1.0 request"},
            {head + "Transfer-Encoding: gzip\r\n\r\n" + body, "final coding is not chunked"},
        };
        for (String[] refused : refusals) {
            // pipelined in the same TCP write as a request that is served, and sent later on the same keep-alive connection
            assertServedThenRefused(List.of(served + served + refused[0]), 2, refused[1]);
            assertServedThenRefused(List.of(served, refused[0]), 1, refused[1]);
        }
        assertEquals(200, TestServers.post(server, "/v1/completions", body).status(), "the server serves on");
        assertQuiet();
    }

    /** Sends each write once the answers to the previous ones have come; {@code served} are answered 200, then a 400 and a close. */
    private void assertServedThenRefused(List<String> writes, int served, String why) throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(20_000);
            InputStream in = s.getInputStream();
            StringBuilder answers = new StringBuilder();
            for (String w : writes) {
                s.getOutputStream().write(w.getBytes(StandardCharsets.ISO_8859_1));
                s.getOutputStream().flush();
                if (w != writes.get(writes.size() - 1)) {
                    answers.append(readResponse(in));
                }
            }
            answers.append(new String(in.readAllBytes(), StandardCharsets.ISO_8859_1)); // to the close
            String all = answers.toString();
            assertEquals(served, all.split("HTTP/1.1 200 OK", -1).length - 1, all);
            int refusal = all.lastIndexOf(" 400 Bad Request\r\n"); // HTTP/1.0 to an HTTP/1.0 request
            assertTrue(refusal > all.lastIndexOf("HTTP/1.1 200") && all.indexOf(" 400 ") == refusal && all.contains(why), all);
        }
    }

    /** One response with a Content-Length, read whole. */
    private static String readResponse(InputStream in) throws Exception {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            head.write(in.read());
        }
        String h = head.toString(StandardCharsets.ISO_8859_1);
        int at = h.toLowerCase(Locale.ROOT).indexOf("content-length: ") + "content-length: ".length();
        return h + new String(in.readNBytes(Integer.parseInt(h.substring(at, h.indexOf('\r', at)))), StandardCharsets.ISO_8859_1);
    }

    /** The event loop never worked more than the limit at a stretch, and the probe was answered all along. */
    private void assertQuiet() throws Exception {
        double longest = stalls.longestMs();
        assertTrue(stalls.ticks() > 0, "the stall detector ran");
        assertTrue(longest < STALL_LIMIT_MS, "the event loop worked " + longest + " ms of CPU at a stretch");
        probe.assertAnswered();
    }

    /** Entries of a completions body's first choice's prompt_logprobs (null included), read as a stream. */
    private static long countPromptLogprobs(InputStream body) throws Exception {
        try (JsonParser p = Json.MAPPER.getFactory().createParser(body)) {
            long entries = 0;
            int depth = 0;
            boolean inside = false;
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                if (!inside && t == JsonToken.FIELD_NAME && p.currentName().equals("prompt_logprobs")) {
                    inside = p.nextToken() == JsonToken.START_ARRAY;
                    continue;
                }
                if (!inside) {
                    continue;
                }
                if (t == JsonToken.END_ARRAY && depth == 0) {
                    return entries;
                }
                if (depth == 0 && (t == JsonToken.START_OBJECT || t == JsonToken.VALUE_NULL)) {
                    entries++;
                }
                depth += t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY ? 1 : t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY ? -1 : 0;
            }
            return entries;
        }
    }

    /** A client polling {@code GET /health} on one keep-alive connection every 20 ms, recording its longest wait. */
    static final class Probe implements AutoCloseable {
        private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong answered = new AtomicLong();
        private final AtomicLong failed = new AtomicLong();
        private final AtomicLong longestNanos = new AtomicLong();
        private final Thread thread;

        Probe(MockServer server) {
            HttpRequest health = HttpRequest.newBuilder(URI.create(server.baseUrl() + "/health")).timeout(Duration.ofSeconds(30)).build();
            thread = new Thread(() -> {
                while (running.get()) {
                    long start = System.nanoTime();
                    try {
                        int status = client.send(health, HttpResponse.BodyHandlers.discarding()).statusCode();
                        (status == 200 ? answered : failed).incrementAndGet();
                    } catch (Exception e) {
                        failed.incrementAndGet();
                    }
                    longestNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "health-probe");
            thread.setDaemon(true);
            thread.start();
        }

        /** Every probe got 200, at least one ran, and none waited for long (a bound even a loaded machine meets). */
        void assertAnswered() {
            assertEquals(0, failed.get(), "probes failed");
            assertTrue(answered.get() > 0, "no probe completed");
            assertTrue(longestNanos.get() < 5_000_000_000L, "a probe waited " + longestNanos.get() / 1e6 + " ms");
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.interrupt();
            thread.join(5_000);
        }
    }
}
