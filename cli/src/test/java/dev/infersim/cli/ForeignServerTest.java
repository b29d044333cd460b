package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Executors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bench against an OpenAI-compatible server that is not an infersim mock: it streams completions without the
 * {@code infersim} ground-truth object and serves a /metrics page that is not Prometheus text.
 */
class ForeignServerTest {
    private static HttpServer server;
    /** Requests for model "broken": the first (the initial test request) succeeds, all later ones fail. */
    private static final java.util.concurrent.atomic.AtomicInteger brokenRequests = new java.util.concurrent.atomic.AtomicInteger();
    /** The headers of the last completion request, as the server read them. */
    private static volatile com.sun.net.httpserver.Headers lastHeaders;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/v1/completions", ForeignServerTest::complete);
        server.createContext("/metrics", x -> reply(x, "text/html", "<html>a dashboard, not Prometheus text</html>"));
        server.start();
    }

    @AfterAll
    static void stop() {
        server.stop(0);
    }

    /** Two tokens and the usage, as any vLLM-like server streams them, and no 'infersim' object. */
    private static void complete(HttpExchange x) throws IOException {
        lastHeaders = x.getRequestHeaders();
        String request = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        if (request.contains("\"hostile\"")) {
            // a message that would clear the screen, overwrite the line and set the window title if printed raw
            byte[] error = ("{\"error\":{\"message\":\"\\u001b[2J\\u001b]0;pwned\\u0007fake OK\\rreal\\u202e\","
                    + "\"type\":\"BadRequestError\"}}").getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(400, error.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(error);
            }
            return;
        }
        if (request.contains("\"broken\"") && brokenRequests.getAndIncrement() > 0) {
            byte[] error = "{\"error\":{\"message\":\"engine dead\",\"type\":\"InternalServerError\"}}"
                    .getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(500, error.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(error);
            }
            return;
        }
        String chunk = "data: {\"id\":\"c\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" a\","
                + "\"finish_reason\":null}]}\n\n";
        String last = "data: {\"id\":\"c\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" b\","
                + "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":16,\"completion_tokens\":2}}\n\n";
        reply(x, "text/event-stream", chunk + last + "data: [DONE]\n\n");
    }

    private static void reply(HttpExchange x, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("content-type", type);
        x.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(bytes);
        }
    }

    private CliRun bench(String... more) {
        return benchModel("m", more);
    }

    private CliRun benchModel(String model, String... more) {
        String base = "http://127.0.0.1:" + server.getAddress().getPort();
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("bench", "--base-url", base,
                "--model", model, "--num-prompts", "3", "--random-input-len", "16", "--random-output-len", "2",
                "--max-send-lag-ms", "1000", "--save-result", "--result-dir", dir.toString(), "--result-filename", "r.json"));
        args.addAll(java.util.List.of(more));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void validateWithoutGroundTruthMarksTheResultInvalidNotOnlyTheExitCode() throws Exception {
        CliRun r = bench("--validate");
        assertEquals(3, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("RUN INVALID: --validate: the server sent no ground truth"), r.out());
        assertFalse(r.out().contains("Run valid: yes"), r.out());
        JsonNode json = new ObjectMapper().readTree(dir.resolve("r.json").toFile());
        assertFalse(json.get("infersim_valid").asBoolean(), "the JSON agrees with the exit code");
        assertTrue(json.get("infersim_invalid_reasons").get(0).asText().contains("no ground truth"), json.toString());
    }

    /** Issue 38: a server whose every request fails sent no ground truth because nothing succeeded, whatever it is. */
    @Test
    void validateAgainstAServerThatOnlyFailsBlamesTheFailuresNotTheKindOfServer() {
        brokenRequests.set(0);
        CliRun r = benchModel("broken", "--validate", "--max-failure-rate", "1");
        assertEquals(3, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("--validate: no request succeeded, so no ground truth came back"), r.out());
        assertFalse(r.out().contains("not an infersim mock"), r.out());
    }

    @Test
    void withoutValidateTheSameRunIsValid() {
        CliRun r = bench();
        assertEquals(0, r.exitCode(), r.out() + r.err());
    }

    @Test
    void theServerSideBlockIsLeftOutWhenTheServerSentNoGroundTruth() {
        CliRun r = bench();
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("Successful requests:"), r.out());
        assertFalse(r.out().contains("Server side (infersim)") || r.out().contains("Mean queue time"),
                "zeros a foreign server never reported: " + r.out());
    }

    @Test
    void scrapingAPageWithoutVllmGaugesSaysSoOnTheConsole() {
        CliRun r = bench("--scrape-metrics", "http://127.0.0.1:" + server.getAddress().getPort() + "/metrics");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("no vllm: gauge on the page"), r.out());
    }

    @Test
    void scrapingAServerThatIsNotThereSaysSoOnTheConsole() {
        CliRun r = bench("--scrape-metrics", "http://127.0.0.1:1/metrics");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().matches("(?s).*Server metrics scrape: +(\\d+) of \\1 polls .* failed, first failure: .*"),
                r.out());
    }

    /** vllm bench serve's --header: every request carries them, and they replace the client's own of the same name. */
    @Test
    void everyRequestCarriesTheHeadersGivenAndTheyReplaceTheClientsOwn() {
        CliRun r = bench("--api-key", "k", "--header", "x-route=canary", "--header", "Authorization=Basic dTpw",
                "x-team=a=b");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertEquals(java.util.List.of("canary"), lastHeaders.get("x-route"));
        assertEquals(java.util.List.of("a=b"), lastHeaders.get("x-team"), "the value is everything after the first =");
        assertEquals(java.util.List.of("Basic dTpw"), lastHeaders.get("authorization"), "replaced, not added");
        assertEquals(java.util.List.of("application/json"), lastHeaders.get("content-type"));
    }

    @Test
    void aHeaderThatIsNotKeyEqualsValueOrNoHeaderNameIsOneLineNamingTheFlag() {
        for (String bad : java.util.List.of("x-route", "=v", "x route=v")) {
            CliRun r = bench("--header", bad);
            assertEquals(2, r.exitCode(), bad + ": " + r.out() + r.err());
            assertTrue(r.err().strip().startsWith("infersim: --header: ") && r.err().strip().lines().count() == 1, r.err());
        }
    }

    @Test
    void aSweepThatCannotResetTheServersPrefixCacheStopsBeforeItsFirstPointNamingTheFlag() {
        CliRun r = CliRun.of("sweep", "--base-url", "http://127.0.0.1:" + server.getAddress().getPort(), "--model", "m",
                "--request-rates", "5", "--num-prompts", "2", "--random-input-len", "16", "--random-output-len", "2",
                "--reset-prefix-cache");
        assertEquals(2, r.exitCode(), r.out() + r.err());
        assertTrue(r.err().strip().startsWith("infersim: --reset-prefix-cache: POST http://127.0.0.1:")
                && r.err().contains("/reset_prefix_cache answered 404")
                && r.err().contains("only with VLLM_SERVER_DEV_MODE=1"), r.err());
    }

    @Test
    void failuresOverTheMaxFailureRateMakeTheRunInvalidEvenWithSendLagFine() throws Exception {
        brokenRequests.set(0);
        CliRun r = benchModel("broken");
        assertEquals(3, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("RUN INVALID: 3 of 3 requests failed (100.0%), over --max-failure-rate 0.0"), r.out());
        brokenRequests.set(0);
        assertEquals(0, benchModel("broken", "--max-failure-rate", "1").exitCode());
    }

    @Test
    void aServersErrorTextReachesTheTerminalWithItsControlCharactersEscaped() {
        CliRun r = benchModel("hostile");
        assertEquals(2, r.exitCode(), r.out() + r.err());
        String printed = r.out() + r.err();
        for (char c : new char[] {'\u001b', '\r', '\u0007', '\u202e'}) {
            assertFalse(printed.indexOf(c) >= 0, "a raw U+" + Integer.toHexString(c) + " was printed: " + printed);
        }
        assertTrue(r.err().contains("\\x1b[2J\\x1b]0;pwned\\x07fake OK\\x0dreal\\u202e"), r.err());
    }
}
