package dev.infersim.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.bench.measure.RunValidity;
import dev.infersim.bench.report.BenchResult;
import dev.infersim.bench.report.HtmlReport;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.ResultJson;
import dev.infersim.result.VllmDetailArrays;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.apache.commons.math3.distribution.ExponentialDistribution;
import org.apache.commons.math3.stat.inference.KolmogorovSmirnovTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client against the in-process infersim mock server (and a scripted server for faults). */
class BenchmarkClientTest {
    private static final ObjectNode NO_METADATA = ResultJson.mapper().createObjectNode();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static MockServer realTime;
    private static MockServer fast;

    @TempDir
    Path dir;

    @BeforeAll
    static void startServers() throws Exception {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        realTime = MockServer.start(ServerOptions.builder(d).port(0).timeScale(1).eventLoops(1).build())
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        fast = MockServer.start(ServerOptions.builder(d).port(0).timeScale(10).eventLoops(1).build())
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stopServers() throws Exception {
        realTime.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        fast.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    static BenchConfig config(String baseUrl, String model, long timeoutMillis) {
        return config(baseUrl, model, timeoutMillis, 1000, baseUrl + "/metrics");
    }

    static BenchConfig config(String baseUrl, String model, long timeoutMillis, int maxConnections, String scrapeUrl) {
        return new BenchConfig(baseUrl, "/v1/completions", model, null, true, timeoutMillis, 1_000_000, 0,
                new GoodputSlo(Double.NaN, 50, Double.NaN), List.of("ttft", "tpot", "itl", "e2el"), List.of(50.0, 99.0),
                maxConnections, scrapeUrl, 100);
    }

    private static Workload workload(long n, double rate, Integer concurrency, int in, int out) {
        var b = WorkloadSpec.builder().numPrompts(n).randomInputLen(in).randomOutputLen(out).requestRate(rate)
                .ignoreEos(true).seed(7);
        if (concurrency != null) {
            b.maxConcurrency(concurrency);
        }
        return Workload.open(b.build());
    }

    @Test
    void latenciesAgreeWithTheServersGroundTruthAndTheJsonHasVllmKeys() throws IOException {
        Path detail = dir.resolve("d.jsonl");
        BenchResult r;
        try (BenchmarkClient client = new BenchmarkClient(config(realTime.baseUrl(),
                realTime.options().servedModelName(), 30_000))) {
            r = client.run(workload(110, 10, null, 100, 16), 10, 0, 0, ResultJson.mapper().createObjectNode().put("infersim_version", "test"), detail);
        }
        assertEquals(100L, r.result().totals().completed(), "110 sent, the first 10 are warmup");
        assertEquals(0L, r.result().totals().failed());
        assertEquals(100L * 16, r.result().totals().totalOutputTokens());
        assertEquals(0L, r.keys().promptTokenMismatches(), "rendered prompts are exactly 100 tokens");
        ClientKeys.TruthError truth = r.keys().groundTruth();
        assertEquals(100L, truth.requests());
        // Client latency = server latency + send lag + network + client parsing: under a millisecond at the median on
        // an idle machine, tens of ms on a saturated one (bench/benchmark-client). The bound only catches gross errors
        // (wrong origin, a missed first chunk on a slow server); the client can never see a token before the server
        // emitted it, so no error may be negative.
        double ttftErrorMedian = truth.ttftAbsErrorMs().p50();
        double e2elErrorMedian = truth.e2elAbsErrorMs().p50();
        assertTrue(ttftErrorMedian < 50, "median TTFT error " + ttftErrorMedian + " ms");
        assertTrue(e2elErrorMedian < 50, "median E2EL error " + e2elErrorMedian + " ms");
        assertEquals(0L, truth.negativeErrors());
        // Every request has 16 tokens, so the mean per-token gap equals the mean TPOT.
        double itl = r.result().metric("itl").meanMs();
        double tpot = r.result().metric("tpot").meanMs();
        assertEquals(tpot, itl, tpot * 0.02, "per-token ITL vs TPOT");

        Path file = dir.resolve("result.json");
        r.report().write(file);
        JsonNode json = JSON.readTree(file.toFile());
        for (String key : List.of("date", "backend", "model_id", "tokenizer_id", "num_prompts", "request_rate",
                "burstiness", "max_concurrency", "duration", "completed", "failed", "total_input_tokens",
                "total_output_tokens", "request_throughput", "request_goodput", "output_throughput",
                "total_token_throughput", "max_output_tokens_per_s", "max_concurrent_requests", "mean_ttft_ms",
                "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
                "mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "p99_e2el_ms")) {
            assertTrue(json.has(key), "result lacks vLLM key " + key);
        }
        assertTrue(json.get("request_goodput").isNumber());
        assertTrue(json.get("infersim_server_metrics").get("time_s").size() > 3, "Prometheus polled every 100 ms");
        assertEquals(100, Files.readAllLines(detail).stream().filter(l -> !l.isBlank()).count());

        Path html = dir.resolve("r.html");
        HtmlReport.writeRun(html, r.result());
        String page = Files.readString(html);
        assertTrue(page.contains("echarts") && page.contains("\"mean_ttft_ms\"") && page.length() > 1_000_000);
    }

    /**
     * The schedule latencies are measured from is the arrival process itself (absolute times, no drift), and no
     * request leaves before its time. How late requests actually leave depends on the machine; the benchmark under
     * bench/benchmark-client measures that, and every run reports it.
     */
    @Test
    void sendScheduleFollowsThePoissonArrivalProcess() throws IOException {
        Path detail = dir.resolve("d.jsonl");
        BenchResult r;
        try (BenchmarkClient client = new BenchmarkClient(config(fast.baseUrl(), fast.options().servedModelName(),
                30_000))) {
            r = client.run(workload(300, 100, null, 16, 2), 0, 0, 0, NO_METADATA, detail);
        }
        // the run judges its own sends against the same process (whether they pass depends on the machine)
        RunValidity.Arrivals arrivals = r.keys().validity().arrivals();
        assertEquals(true, arrivals.judged(), arrivals.toString());
        assertEquals(300, arrivals.test().sends());
        assertEquals(100.0, arrivals.test().requestedRatePerS());
        assertTrue(r.keys().readDelayMs().samples() > 0);
        List<JsonNode> rows = Files.readAllLines(detail).stream().filter(l -> !l.isBlank())
                .map(BenchmarkClientTest::tree).toList();
        assertEquals(300, rows.size());
        assertTrue(rows.stream().allMatch(n -> n.get("send_lag_ms").asDouble() >= 0), "a request left early");
        double[] scheduled = rows.stream().mapToDouble(n -> n.get("scheduled_time_s").asDouble()).sorted().toArray();
        double[] gaps = new double[scheduled.length - 1];
        for (int i = 1; i < scheduled.length; i++) {
            gaps[i - 1] = scheduled[i] - scheduled[i - 1];
        }
        double mean = (scheduled[scheduled.length - 1] - scheduled[0]) / gaps.length;
        assertEquals(1.0 / 100, mean, 0.1 / 100, "mean gap");
        double p = new KolmogorovSmirnovTest().kolmogorovSmirnovTest(new ExponentialDistribution(mean), gaps);
        assertTrue(p > 0.01, "send schedule gaps are not exponential: KS p = " + p);
    }

    /**
     * With a detail file, the saved result gets vLLM's per-request arrays, read back from that file: one entry per
     * measured request, times in seconds. The server answers every 4th request 429 and streams the rest as 9 tokens
     * in chunks of 2, so a success has 4 chunk gaps (10 ms apart when sent; a busy machine may deliver two at once).
     */
    @Test
    void savedResultCarriesVllmsPerRequestArraysAgreeingWithTheDetailFile() throws IOException {
        Path detail = dir.resolve("d.jsonl");
        BenchResult r;
        try (FakeStreamingServer server = new FakeStreamingServer(20, 10, 2, 4, 0, 0);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), "m", 30_000))) {
            r = client.run(workload(20, 50, null, 16, 9), 0, 0, 0, NO_METADATA, detail);
        }
        Path file = dir.resolve("result.json");
        r.report().write(file, VllmDetailArrays.of(detail));
        JsonNode json = JSON.readTree(file.toFile());
        assertTrue(r.result().totals().failed() > 0 && r.result().totals().completed() > 0);
        List<JsonNode> rows = Files.readAllLines(detail).stream().filter(l -> !l.isBlank())
                .map(BenchmarkClientTest::tree).sorted(java.util.Comparator.comparingLong(n -> n.get("index").asLong()))
                .toList();
        assertEquals(20, rows.size());
        for (String key : List.of("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors")) {
            assertEquals(20, json.get(key).size(), key);
        }
        for (int i = 0; i < rows.size(); i++) {
            JsonNode row = rows.get(i);
            boolean failed = row.has("error_type");
            JsonNode itls = json.get("itls").get(i);
            double ttftS = json.get("ttfts").get(i).asDouble();
            assertEquals(row.get("input_len").asInt(), json.get("input_lens").get(i).asInt());
            assertEquals(failed ? 0 : 9, json.get("output_lens").get(i).asInt());
            assertEquals(failed ? "too many requests" : "", json.get("errors").get(i).asText());
            assertEquals(failed ? "" : " tok".repeat(9), json.get("generated_texts").get(i).asText());
            if (failed) {
                assertEquals(0.0, ttftS);
                assertEquals(0, itls.size());
                continue;
            }
            assertEquals(row.get("ttft_ms").asDouble() / 1e3, ttftS, 1e-12);
            assertTrue(ttftS >= 0.02 && ttftS < 5, "TTFT in seconds: " + ttftS);
            assertEquals(4, itls.size());
            double decodeS = 0;
            for (int k = 0; k < 4; k++) {
                assertEquals(row.get("chunk_gaps_ms").get(k).asDouble() / 1e3, itls.get(k).asDouble(), 1e-12);
                decodeS += itls.get(k).asDouble();
            }
            assertEquals((row.get("e2el_ms").asDouble() - row.get("ttft_ms").asDouble()) / 1e3, decodeS, 1e-9,
                    "the gaps span the first to the last token");
        }
    }

    @Test
    void closedLoopKeepsExactlyNInFlight() {
        BenchResult r;
        try (BenchmarkClient client = new BenchmarkClient(config(fast.baseUrl(), fast.options().servedModelName(),
                30_000))) {
            r = client.run(workload(120, Double.POSITIVE_INFINITY, 8, 64, 32), 0, 0, 0, NO_METADATA);
        }
        assertEquals("closed_loop", r.keys().loadMode());
        assertEquals(8, r.keys().maxInFlight());
        double mean = r.keys().meanInFlight();
        assertTrue(mean > 0.95 * 8 && mean <= 8, "mean in flight while sending " + mean);
        assertEquals(120L, r.result().totals().completed());
        // Little's law while every user is busy: throughput = users in flight / mean E2EL, without the drain.
        double steady = r.keys().steadyRequestThroughput();
        assertEquals(mean / (r.result().metric("e2el").meanMs() / 1e3), steady, 1e-9);
    }

    @Test
    void errorsTimeoutsAndResetsAreCountedByType() throws Exception {
        try (FakeStreamingServer server = new FakeStreamingServer(5, 5, 2, 5, 7, 11);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), "m", 1_000))) {
            BenchResult r = client.run(workload(70, 100, null, 16, 6), 0, 0, 0, NO_METADATA);
            // The server numbers requests from 1, the initial test request included: the run is 2..71.
            long http429 = 0;
            long timeouts = 0;
            long resets = 0;
            for (int n = 2; n <= 71; n++) {
                if (n % 5 == 0) {
                    http429++;
                } else if (n % 7 == 0) {
                    timeouts++;
                } else if (n % 11 == 0) {
                    resets++;
                }
            }
            Map<String, Long> counts = r.errors().counts();
            assertEquals(http429, counts.get("http_429"), counts.toString());
            assertEquals(timeouts, counts.get("timeout"), counts.toString());
            assertEquals(resets, counts.get("connection_reset"), counts.toString());
            assertEquals(http429 + timeouts + resets, r.result().totals().failed());
            assertEquals(70 - http429 - timeouts - resets, r.result().totals().completed());
            assertEquals("too many requests", r.keys().errors().get("http_429").firstMessages().get(0));
        }
    }

    @Test
    void connectionsAreReusedUpToTheCapAndRequestsBeyondItWaitForOne() {
        // 8 users on at most 4 connections; every 5th answer is a 429, whose connection stays usable.
        try (FakeStreamingServer server = new FakeStreamingServer(2, 2, 1, 5, 0, 0);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), "m", 30_000, 4, null))) {
            BenchResult r = client.run(workload(60, Double.POSITIVE_INFINITY, 8, 16, 4), 0, 0, 0, NO_METADATA);
            long http429 = r.errors().counts().getOrDefault("http_429", 0L);
            assertEquals(12, http429, r.errors().counts().toString()); // requests 2..61 of the server's count
            assertEquals(60 - http429, r.result().totals().completed());
            assertTrue(server.maxConnectionsOpen.get() <= 4, "open at once: " + server.maxConnectionsOpen.get());
            assertTrue(server.connectionsOpened.get() <= 4, "opened in all: " + server.connectionsOpened.get());
            assertTrue(server.maxInFlight.get() <= 4, "in flight at the server: " + server.maxInFlight.get());
        }
    }

    @Test
    @Tag("wallclock") // how far a run gets in a wall-clock sleep
    void interruptedRunStillReportsWhatItMeasured() throws Exception {
        try (FakeStreamingServer server = new FakeStreamingServer(5, 20, 1, 0, 0, 0);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), "m", 30_000))) {
            CompletableFuture<BenchResult> run = CompletableFuture.supplyAsync(
                    () -> client.run(workload(1000, 50, null, 16, 10), 0, 0, 0, NO_METADATA));
            Thread.sleep(1500);
            client.stop();
            BenchResult r = run.get(30, TimeUnit.SECONDS);
            assertTrue(r.keys().interrupted());
            assertFalse(r.valid());
            long completed = r.result().totals().completed();
            assertTrue(completed > 10 && completed < 1000, completed + " completed");
            assertEquals(1000L, r.result().run().numPrompts(), "what was asked for, as vLLM writes it");
            assertEquals(0L, r.result().totals().failed(), "requests cut off by the interrupt are not failures");
            assertNotNull(r.result().metric("ttft"));
        }
    }

    @Test
    @Tag("wallclock") // how far a run gets in a wall-clock sleep
    void requestsInFlightAtAnInterruptAreCountedAsCancelledSoTheTotalsAddUp() throws Exception {
        // Each request streams for about 1 s at 50 req/s: some 50 are in flight when the run is stopped.
        try (FakeStreamingServer server = new FakeStreamingServer(5, 60, 1, 0, 0, 0);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), "m", 30_000))) {
            CompletableFuture<BenchResult> run = CompletableFuture.supplyAsync(
                    () -> client.run(workload(1000, 50, null, 16, 16), 0, 0, 0, NO_METADATA));
            // stopped once 30 measured requests reached the server (not after a fixed sleep: a loaded machine may still
            // be setting the run up then, with nothing in flight to cancel)
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (server.received.get() < 31 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            client.stop();
            BenchResult r = run.get(30, TimeUnit.SECONDS);
            long completed = r.result().totals().completed();
            long failed = r.result().totals().failed();
            long cancelled = r.keys().cancelled();
            long sent = r.keys().sent();
            assertTrue(cancelled > 0, "requests were in flight at the interrupt");
            assertEquals(sent, completed + failed + cancelled);
            assertEquals(server.received.get() - 1, sent, "every request the server received but the initial test one");
            assertTrue(r.invalidReasons().stream().anyMatch(reason -> reason.contains(cancelled + " of them cut off")),
                    r.invalidReasons().toString()); // beside, on a busy machine, a send-lag reason
            ByteArrayOutputStream console = new ByteArrayOutputStream();
            r.printSummary(new PrintStream(console, true, StandardCharsets.UTF_8));
            assertTrue(console.toString(StandardCharsets.UTF_8).contains(cancelled + " of " + sent + " sent"));
        }
    }

    private static JsonNode tree(String line) {
        try {
            return JSON.readTree(line);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
