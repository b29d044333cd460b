package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How sweep treats its load points, against small scripted servers. */
class SweepCommandTest {

    @TempDir
    Path dir;

    /**
     * Streams a one-token completion for the first {@code answered} requests and answers every later one with 500, so
     * a sweep can be made to lose its server at a known request.
     */
    private static HttpServer serverAnsweringFirst(int answered) throws IOException {
        AtomicInteger received = new AtomicInteger();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/", x -> {
            x.getRequestBody().readAllBytes();
            if (received.incrementAndGet() > answered) {
                send(x, 500, "application/json", "{\"error\":{\"message\":\"engine died\",\"code\":500}}");
                return;
            }
            send(x, 200, "text/event-stream", """
                    data: {"id":"c","object":"text_completion","choices":[{"index":0,"text":"hi","finish_reason":null}]}

                    data: {"id":"c","object":"text_completion","choices":[{"index":0,"text":"","finish_reason":"length"}],\
                    "usage":{"prompt_tokens":16,"completion_tokens":1,"total_tokens":17}}

                    data: [DONE]

                    """);
        });
        server.start();
        return server;
    }

    private static void send(HttpExchange x, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("content-type", type);
        x.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Test
    void aPointWhoseInitialRequestFailsEndsTheSweepButKeepsThePointsMeasuredBeforeIt() throws Exception {
        // The first point takes its test request and 40 measured ones; the server fails from the second point's test
        // request on. That used to end the sweep with exit 2 and no result, losing the first point. (With only a few
        // requests the first point's steady throughput is too noisy to tell from a knee.) No client warm-up requests,
        // which would take some of the 41.
        HttpServer server = serverAnsweringFirst(41);
        try {
            CliRun r = CliRun.of("sweep", "--base-url", "http://127.0.0.1:" + server.getAddress().getPort(),
                    "--model", "m", "--request-rates", "20,40,80", "--num-prompts", "40", "--random-input-len", "16",
                    "--random-output-len", "1", "--max-send-lag-ms", "1000", "--client-warmups", "0", "--save-result",
                    "--result-dir",
                    dir.toString(), "--result-filename", "s.json");
            assertEquals(3, r.exitCode(), "a point that measured nothing makes the sweep invalid: " + r.out() + r.err());
            assertTrue(r.out().contains("Sweep result written"), r.out());
            assertFalse(r.out().contains("NaN"), "a point without requests prints no NaN: " + r.out());
            assertTrue(r.out().lines().anyMatch(l -> l.trim().startsWith("40 ") && l.contains(" - ")), r.out());
            JsonNode json = new ObjectMapper().readTree(Files.readString(dir.resolve("s.json")));
            JsonNode runs = json.get("runs");
            assertEquals(2, runs.size(), "the measured point and the failed one; the sweep stops there: " + json);
            assertEquals(40, runs.get(0).get("completed").asInt());
            assertEquals(40.0, runs.get(1).get("request_rate").asDouble());
            assertEquals(0, runs.get(1).get("completed").asInt());
            assertTrue(runs.get(1).get("infersim_error").asText().contains("engine died"), runs.get(1).toString());
            JsonNode sweep = json.get("infersim_sweep");
            assertEquals(40.0, sweep.get("knee_load").asDouble(), sweep.toString());
            assertTrue(sweep.get("knee_reason").asText().contains("initial test request"), sweep.toString());
        } finally {
            server.stop(0);
        }
    }

    @Test
    void loadsRunLightestFirstAndEachOnlyOnce() throws Exception {
        // The knee is judged against the lightest load and each load's detail file is named by it, so an unsorted list
        // judged against the wrong baseline and a repeated load overwrote its own per-request file.
        HttpServer server = serverAnsweringFirst(Integer.MAX_VALUE);
        try {
            CliRun r = CliRun.of("sweep", "--base-url", "http://127.0.0.1:" + server.getAddress().getPort(),
                    "--model", "m", "--concurrencies", "2,1,2", "--num-prompts", "3", "--random-input-len", "16",
                    "--random-output-len", "1", "--max-send-lag-ms", "1000", "--save-result", "--save-detailed",
                    "--result-dir", dir.toString(), "--result-filename", "c.json");
            assertEquals(0, r.exitCode(), r.out() + r.err());
            JsonNode sweep = new ObjectMapper().readTree(Files.readString(dir.resolve("c.json")));
            JsonNode points = sweep.get("infersim_sweep").get("points");
            assertEquals(2, points.size(), points.toString());
            assertEquals(1.0, points.get(0).get("load").asDouble());
            assertEquals(2.0, points.get(1).get("load").asDouble());
            assertEquals(3, sweep.get("runs").get(1).get("ttfts").size(), "the point's own 3 requests");
        } finally {
            server.stop(0);
        }
    }
}
