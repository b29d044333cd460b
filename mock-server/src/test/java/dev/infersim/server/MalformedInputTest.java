package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.http.ResponseOutputStream;
import dev.infersim.server.json.Json;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bytes a strict JSON server refuses get a 400 in OpenAI error JSON; a large body never holds up other connections. */
class MalformedInputTest {
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(8), 100).build());

    private static HttpResponse<String> post(MockServer server, byte[] body) throws Exception {
        return TestServers.http().send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/completions"))
                .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static byte[] completion(byte[] promptBytes, String after) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes("{\"prompt\":\"a".getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(promptBytes);
        b.writeBytes(("b\",\"max_tokens\":1}" + after).getBytes(StandardCharsets.ISO_8859_1));
        return b.toByteArray();
    }

    private static String badRequest(HttpResponse<String> r) throws Exception {
        assertEquals(400, r.statusCode(), r.body());
        JsonNode e = Json.MAPPER.readTree(r.body()).get("error");
        assertEquals("BadRequestError", e.get("type").asText());
        return e.get("message").asText();
    }

    @Test
    void bytesThatAreNotUtf8Are400NotSilentlyReplaced() throws Exception {
        byte[][] invalid = {
            {(byte) 0xC0, (byte) 0xAF},                           // overlong "/"
            {(byte) 0xED, (byte) 0xA0, (byte) 0x80},              // an encoded surrogate (U+D800)
            {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, // above U+10FFFF
            {(byte) 0xE2, (byte) 0x82},                           // cut short
        };
        for (byte[] bytes : invalid) {
            assertEquals("Invalid JSON body: not valid UTF-8 at byte 12", badRequest(post(SERVER.get(), completion(bytes, ""))));
        }
        byte[] euro = {(byte) 0xE2, (byte) 0x82, (byte) 0xAC};
        assertEquals(200, post(SERVER.get(), completion(euro, "")).statusCode(), "well-formed UTF-8 is served");
    }

    @Test
    void anythingButWhitespaceAfterTheBodyIs400() throws Exception {
        byte[] none = new byte[0];
        assertTrue(badRequest(post(SERVER.get(), completion(none, "xyz"))).startsWith("Invalid JSON body"));
        assertTrue(badRequest(post(SERVER.get(), completion(none, "\0"))).startsWith("Invalid JSON body"));
        assertTrue(badRequest(post(SERVER.get(), completion(none, "{}"))).startsWith("Invalid JSON body"));
        assertEquals(200, post(SERVER.get(), completion(none, " \r\n\t")).statusCode());
    }

    @Test
    void aMalformedHeaderGetsErrorJsonAndTheConnectionClosesCleanly() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", SERVER.get().port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/js\u007Fon\r\n"
                    + "Content-Length: 2\r\n\r\n{}").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            String response = new String(in.readAllBytes(), StandardCharsets.UTF_8); // ends when the server closes
            assertTrue(response.startsWith("HTTP/1.1 400 "), response);
            assertTrue(response.toLowerCase().contains("\r\nconnection: close\r\n"), response);
            String body = response.substring(response.indexOf("\r\n\r\n") + 4);
            assertTrue(Json.MAPPER.readTree(body).at("/error/message").asText().startsWith("Invalid HTTP request"), body);
        }
        assertEquals(200, post(SERVER.get(), completion(new byte[0], "")).statusCode(), "the server serves on");
    }

    /**
     * With the server's one worker thread held, a large body waits for its parse while a small request on the same
     * event loop is answered: the event loop never parses or tokenizes a large body itself.
     */
    @Test
    void aLargeBodyIsParsedOffTheEventLoopWhileOthersAreServed() throws Exception {
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
        CountDownLatch release = new CountDownLatch(1);
        try {
            ServerOptions options = TestServers.options(TestServers.llama8b(8), 100).eventLoops(1).build();
            MockServer server = MockServer.start(vertx, options, new RooflineCostModel(options.deployment()))
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            try {
                CountDownLatch held = new CountDownLatch(1);
                vertx.executeBlocking(() -> {
                    held.countDown();
                    return release.await(30, TimeUnit.SECONDS);
                });
                assertTrue(held.await(10, TimeUnit.SECONDS));
                String words = "word ".repeat(ResponseOutputStream.OFF_LOOP_BYTES / 5 + 1);
                CompletableFuture<HttpResponse<String>> large = TestServers.http().sendAsync(HttpRequest.newBuilder(
                                URI.create(server.baseUrl() + "/v1/completions")).header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"" + words + "\",\"max_tokens\":1}")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, post(server, completion(new byte[0], "")).statusCode());
                // Held, the parse cannot finish however long this waits; parsed on the event loop it would.
                assertThrows(TimeoutException.class, () -> large.get(500, TimeUnit.MILLISECONDS),
                        "the large body waits for a worker, not the event loop");
                release.countDown();
                HttpResponse<String> reply = large.get(30, TimeUnit.SECONDS);
                assertEquals(200, reply.statusCode(), reply.body());
            } finally {
                release.countDown();
                server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
