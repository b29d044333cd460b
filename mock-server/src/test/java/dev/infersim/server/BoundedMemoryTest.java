package dev.infersim.server;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.infersim.server.json.Json;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A response larger than the server's whole heap is served, several at once: echo with {@code logprobs: 20} on a
 * 20,000-token prompt is about 45 MB of JSON (echo's logprobs and the prompt_logprobs it implies), and three of them go
 * to a server in a child JVM with a 96 MiB heap, where building each body in memory once ran a 512 MiB heap out and
 * left requests unanswered. Each is written a chunk at a time as it is read, and the server answers /health after.
 */
class BoundedMemoryTest {
    @Test
    void threeResponsesEachLargerThanTheHeapAreAllServedWhole() throws Exception {
        Process child = ChildServer.start("true", "-Xmx96m");
        StringBuilder output = new StringBuilder();
        try {
            int port = ChildServer.port(child, output);
            int tokens = 20_000;
            String body = "{\"prompt\":\"" + "word ".repeat(tokens - 1) + "word\",\"max_tokens\":1,\"echo\":true,\"logprobs\":20}";
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                    .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
            List<CompletableFuture<long[]>> answers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                answers.add(TestServers.http().sendAsync(request, HttpResponse.BodyHandlers.ofInputStream())
                        .thenApply(r -> new long[] {r.statusCode(), promptEntries(r.body())}));
            }
            for (CompletableFuture<long[]> a : answers) {
                long[] r = a.get(120, TimeUnit.SECONDS);
                assertEquals(200, r[0], output.toString());
                assertEquals(tokens, r[1], "every prompt token's logprobs, in a complete body");
            }
            assertEquals(200, TestServers.http().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode());
            assertTrue(child.isAlive(), output.toString());
            assertTrue(!output.toString().contains("OutOfMemoryError"), output.toString());
        } finally {
            child.getOutputStream().close();
            child.destroy();
            child.waitFor();
        }
    }

    /** The entries of the first choice's prompt_logprobs, read as a stream (the body is never held whole here either). */
    private static long promptEntries(InputStream body) {
        try (JsonParser p = Json.MAPPER.getFactory().createParser(body)) {
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                if (t == JsonToken.FIELD_NAME && p.currentName().equals("prompt_logprobs") && p.nextToken() == JsonToken.START_ARRAY) {
                    long entries = 0;
                    for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
                        entries++;
                        p.skipChildren();
                    }
                    return entries;
                }
            }
            return -1;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
