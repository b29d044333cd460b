package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.config.HttpTimeouts;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.FrontDoor;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.http.HardenedHttpServer;
import dev.infersim.server.json.Json;
import dev.infersim.sim.TieBreak;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP surface refuses what a hardened server refuses: framings that can smuggle a request (and whatever was sent
 * behind one), connections that hold a descriptor without finishing a request, an empty API key, vLLM's development
 * routes outside development mode, and error messages that describe the parser rather than the request. The framing
 * and timeout rules hold on a replica and on a fleet's front door alike (one implementation, {@link HardenedHttpServer}).
 */
class HttpHardeningTest {
    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    /** Where a hardening test sends its bytes: a replica, or a fleet's front door (the same HTTP server). */
    enum Listener { REPLICA, FRONT_DOOR }

    /** A listener's port, and how to close it (a front door with its fleet; a replica closes with the test). */
    private record Target(int port, AutoCloseable closer) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            closer.close();
        }
    }

    private static Target start(Listener listener, ServerOptions options) throws Exception {
        if (listener == Listener.REPLICA) {
            return new Target(SERVERS.start(options).port(), () -> { });
        }
        FrontDoor door = FrontDoor.start(options, 1, Duration.ZERO, s -> { }, "round-robin", TieBreak.ROUND_ROBIN)
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        return new Target(door.port(), () -> door.close(Duration.ZERO).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS));
    }

    @ParameterizedTest
    @EnumSource(Listener.class)
    void aRequestWithBothContentLengthAndChunkedEncodingIsRefusedAndNothingBehindItIsServed(Listener listener) throws Exception {
        try (Target t = start(listener, TestServers.options(TestServers.llama8b(4), 50).build())) {
            String body = "{\"prompt\":\"hi\",\"max_tokens\":1}";
            // in one write: the refused request, its chunked body, and a well-formed request pipelined behind it
            Exchange e = raw(t.port(), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(body.length()) + "\r\n"
                    + body + "\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n");
            assertTrue(e.head.startsWith("HTTP/1.1 400"), e.head);
            assertTrue(e.head.toLowerCase(java.util.Locale.ROOT).contains("connection: close"), e.head);
            assertTrue(e.body.contains("both Content-Length and Transfer-Encoding"), e.body);
            assertFalse(e.body.contains("HTTP/1.1 200"), "the request pipelined behind it is not served: " + e.body);
            assertTrue(e.closed, "the connection is closed after the answer");
        }
    }

    @ParameterizedTest
    @EnumSource(Listener.class)
    void transferEncodingOnHttp10IsRefusedAndItsConnectionClosed(Listener listener) throws Exception {
        try (Target t = start(listener, TestServers.options(TestServers.llama8b(4), 50).build())) {
            Exchange e = raw(t.port(), "POST /v1/completions HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "2\r\n{}\r\n0\r\n\r\n");
            assertTrue(e.head.startsWith("HTTP/1.") && e.head.contains(" 400"), e.head);
            assertTrue(e.body.contains("Transfer-Encoding is not accepted in an HTTP/1.0 request"), e.body);
            assertTrue(e.closed);
        }
    }

    @ParameterizedTest
    @EnumSource(Listener.class)
    void obsoleteLineFoldingIsRefusedAndItsConnectionClosed(Listener listener) throws Exception {
        try (Target t = start(listener, TestServers.options(TestServers.llama8b(4), 50).build())) {
            Exchange e = raw(t.port(), "GET /health HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n");
            assertTrue(e.head.startsWith("HTTP/1.1 400"), e.head);
            assertTrue(e.body.contains("obsolete line folding"), e.body);
            assertTrue(e.closed);
            assertTrue(raw(t.port(), "GET /health HTTP/1.1\r\nHost: x\r\nX-Plain: a b\r\nConnection: close\r\n\r\n").head
                    .startsWith("HTTP/1.1 200"), "an unfolded request is served");
        }
    }

    @ParameterizedTest
    @EnumSource(Listener.class)
    void aConnectionSendingHalfAHeaderIsClosedAtTheHeaderTimeout(Listener listener) throws Exception {
        try (Target t = start(listener, TestServers.options(TestServers.llama8b(4), 50)
                .timeouts(new HttpTimeouts(60_000, 300, 0)).build()); Socket s = new Socket("127.0.0.1", t.port())) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            assertEquals(-1, s.getInputStream().read(), "closed without an answer");
        }
    }

    @Test
    void anIdleConnectionIsClosedAfterTheKeepAliveTimeoutButNeverDuringARequest() throws Exception {
        MockServer server = SERVERS.start(TestServers.options(TestServers.llama8b(4), 1)
                .timeouts(new HttpTimeouts(300, 60_000, 0)).build());
        try (Socket silent = new Socket("127.0.0.1", server.port())) {
            silent.setSoTimeout(30_000);
            assertEquals(-1, silent.getInputStream().read(), "a connection that never sends is closed");
        }
        // a request that generates for well over the keep-alive timeout (64 tokens at time scale 1), then idles
        String body = "{\"prompt\":\"hi\",\"max_tokens\":64,\"ignore_eos\":true}";
        Exchange e = raw(server.port(), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length() + "\r\n\r\n" + body);
        assertTrue(e.head.startsWith("HTTP/1.1 200"), e.head);
        assertEquals(64, Json.MAPPER.readTree(e.body).at("/usage/completion_tokens").asInt(), "answered in full");
        assertTrue(e.closed, "then closed once idle");
    }

    @Test
    void developmentRoutesExistOnlyInDevelopmentMode() throws Exception {
        MockServer plain = SERVERS.start(TestServers.options(TestServers.llama8b(4), 50).build());
        assertEquals(404, TestServers.post(plain, "/reset_prefix_cache", "").status());
        MockServer dev = SERVERS.start(TestServers.options(TestServers.llama8b(4), 50).devMode(true).build());
        assertEquals(200, TestServers.post(dev, "/reset_prefix_cache", "").status());
    }

    @Test
    void anEmptyApiKeyIsRefusedAndTheBearerSchemeIsMatchedInAnyCase() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TestServers.options(TestServers.llama8b(4), 50).apiKey("").build());
        assertTrue(e.getMessage().contains("--api-key must not be empty"), e.getMessage());
        MockServer server = SERVERS.start(TestServers.options(TestServers.llama8b(4), 50).apiKey("s3cret").build());
        assertEquals(200, TestServers.get(server, "/v1/models", "authorization", "bearer s3cret").status());
        assertEquals(401, TestServers.get(server, "/v1/models", "authorization", "Bearer s3cre").status());
        assertEquals(401, TestServers.get(server, "/v1/models", "authorization", "Basic s3cret").status());
        assertEquals(401, TestServers.get(server, "/v1/models").status());
    }

    @Test
    void malformedJsonIsDescribedInJsonsTermsNotTheParsers() throws Exception {
        MockServer server = SERVERS.start(TestServers.options(TestServers.llama8b(4), 50).build());
        for (String bad : new String[] {"{\"prompt\":\"hi\",\"max_tokens\":[1", "{\"prompt\":\"hi\",", "{\"prompt\":1e", "{prompt:1}",
                "[".repeat(2000) + "]".repeat(2000), "{\"prompt\":" + "9".repeat(2000) + "}", "{\"a\":tru}"}) {
            TestServers.Reply r = TestServers.post(server, "/v1/completions", bad);
            assertEquals(400, r.status(), bad);
            String message = r.json().at("/error/message").asText();
            assertTrue(message.startsWith("Invalid JSON body: "), message);
            for (String internal : new String[] {"`", "Source", "REDACTED", "StreamReadConstraints", "FIELD_NAME", "com.fasterxml", "\n"}) {
                assertFalse(message.contains(internal), message);
            }
        }
    }

    @Test
    void fieldsVllmDeclaresAreTypeCheckedEvenWhereInfersimIgnoresThem() throws Exception {
        MockServer server = SERVERS.start(TestServers.options(TestServers.llama8b(4), 50).build());
        JsonNode e = TestServers.post(server, "/v1/completions", "{\"prompt\":\"hi\",\"skip_special_tokens\":\"yes\"}").json();
        assertEquals("skip_special_tokens", e.at("/error/param").asText());
        assertEquals(400, e.at("/error/code").asInt());
        assertEquals("stop_token_ids", TestServers.post(server, "/v1/completions", "{\"prompt\":\"hi\",\"stop_token_ids\":[1,\"2\"]}")
                .json().at("/error/param").asText());
        assertEquals("chat_template_kwargs", TestServers.post(server, "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\","
                + "\"content\":\"x\"}],\"chat_template_kwargs\":\"all\"}").json().at("/error/param").asText());
        assertEquals(200, TestServers.post(server, "/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":1,\"skip_special_tokens\":false,"
                + "\"no_such_field\":{\"any\":1}}").status(), "right types and unknown fields pass");
    }

    /** A raw answer: the head, the body, and whether the server then closed the connection. */
    private record Exchange(String head, String body, boolean closed) {
    }

    private static Exchange raw(int port, String request) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            boolean closed;
            try {
                for (int b = in.read(); b >= 0; b = in.read()) {
                    bytes.write(b);
                }
                closed = true;
            } catch (SocketTimeoutException e) {
                closed = false;
            }
            String all = bytes.toString(StandardCharsets.UTF_8);
            int split = all.indexOf("\r\n\r\n");
            return split < 0 ? new Exchange(all, "", closed) : new Exchange(all.substring(0, split), all.substring(split + 4), closed);
        }
    }
}
