package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.server.HeadlessBrowser;
import dev.infersim.server.PageLayout;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.LongFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** A simulation replayed on the dashboard: in model time, as the live feed's snapshots, ending when the run does. */
class SimulationReplayTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    static Path dir;
    private static SimulationResult result;
    private static Path detail;

    @BeforeAll
    static void simulate() {
        detail = dir.resolve("detail.jsonl");
        Workload w = Workload.open(WorkloadSpec.builder().numPrompts(3000).randomInputLen(512).randomOutputLen(64)
                .ignoreEos(true).requestRate(20).seed(5).build());
        try (RequestLogWriter writer = new RequestLogWriter(detail, true)) {
            result = Simulation.single(EngineCore.create(Deployment.builder(Profiles.gpu("h100"),
                    Profiles.model("llama-3.1-8b")).build()), SimulationOptions.defaults(), writer).run(w);
        }
    }

    private static JsonNode at(SimulationReplay replay, double seconds) throws Exception {
        return JSON.readTree(replay.snapshotAt((long) (seconds * 1e9))).get("replicas").get(0);
    }

    @Test
    void theEndOfTheReplayCountsEveryRequestAndEveryToken() throws Exception {
        SimulationReplay replay = new SimulationReplay(result, detail, 10);
        JsonNode end = at(replay, 1e6);
        assertEquals(3000, end.get("finished").asLong());
        assertEquals(3000, sum(end.get("ttft").get("count")));
        assertEquals(3000 * 63, sum(end.get("itl").get("count")), "63 gaps between 64 tokens, per request");
        assertEquals(0, end.get("running").asInt());
    }

    @Test
    void midRunTheRatesAndLittlesLawHold() throws Exception {
        SimulationReplay replay = new SimulationReplay(result, detail, 10);
        JsonNode mid = at(replay, 75);
        assertEquals(20, mid.get("arrival_rate").asDouble(), 4, "Poisson arrivals at 20/s over ten seconds");
        assertEquals(20, mid.get("completion_rate").asDouble(), 4);
        JsonNode little = mid.get("little");
        assertEquals(little.get("L").asDouble(), little.get("lambda_W").asDouble(), 0.25 * little.get("L").asDouble(),
                little.toString());
        assertTrue(at(replay, 50).get("finished").asLong() < mid.get("finished").asLong());
        assertTrue(sum(at(replay, 50).get("ttft").get("count")) < sum(mid.get("ttft").get("count")));
    }

    @Test
    void eachViewerPlaysFromTheStartAtTheChosenSpeedAndThenEnds() throws Exception {
        SimulationReplay replay = new SimulationReplay(result, detail, 10);
        LongFunction<String> viewer = replay.viewer();
        assertEquals(0, JSON.readTree(viewer.apply(5_000_000_000L)).get("model_time_s").asDouble(), 1e-9);
        assertEquals(20, JSON.readTree(viewer.apply(7_000_000_000L)).get("model_time_s").asDouble(), 1e-9,
                "two wall seconds at 10x");
        JsonNode last = JSON.readTree(viewer.apply(1_000_000_000_000L));
        assertEquals(3000, last.get("replicas").get(0).get("finished").asLong(), "the final state is shown once");
        assertNull(viewer.apply(1_000_500_000_000L), "then the stream ends");
        assertEquals(0, JSON.readTree(replay.viewer().apply(1L)).get("model_time_s").asDouble(), 1e-9,
                "a new viewer starts over");
    }

    @Test
    void theReplayServerPushesSnapshotsAsServerSentEvents() throws Exception {
        ReplayServer.Started server = ReplayServer.start(new SimulationReplay(result, detail, 50), 0);
        try {
            HttpResponse<java.io.InputStream> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.port() + "/dashboard/events")).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertEquals("text/event-stream", r.headers().firstValue("content-type").orElse(""));
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                String first = lines.readLine();
                assertTrue(first.startsWith("data: {\"source\":\"simulation replay\""), first);
            }
            String page = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.port() + "/dashboard")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(page.contains("new EventSource('/dashboard/events')"), "the live dashboard's page");
        } finally {
            server.vertx().close().toCompletionStage().toCompletableFuture().get();
        }
    }

    /**
     * The replay in a real browser, as a class watches it: every chart draws (the step time too), the header names the
     * speed as people write it, the replicas chart has whole-number ticks, and a reader sees no label cut or covered.
     */
    @Test
    void theReplayReadsAtAGlanceInABrowser() throws Exception {
        assumeTrue(HeadlessBrowser.available(), HeadlessBrowser.BINARY + " is not installed");
        ReplayServer.Started server = ReplayServer.start(new SimulationReplay(result, detail, 4.888 / 3), 0);
        try (HeadlessBrowser browser = new HeadlessBrowser(dir.resolve("profile"))) {
            browser.open("http://127.0.0.1:" + server.port() + "/dashboard");
            browser.waitFor(() -> browser.eval("window.dashboard.updates").asInt() >= 6, Duration.ofSeconds(30),
                    () -> "six snapshots");
            String status = browser.eval("document.getElementById('status').textContent").asText();
            assertTrue(status.contains(", 1.63x;"), status);
            JsonNode step = browser.eval("charts.step.getOption().series.map(s=>s.data.filter(d=>d[1]>0).length)");
            assertTrue(step.get(0).asInt() > 0, "the step-time chart has points: " + step);
            assertEquals(List.of(), PageLayout.problems(browser), "what a reader would see wrong");
            browser.screenshot(Path.of("target", "dashboard-replay.png"));
        } finally {
            server.vertx().close().toCompletionStage().toCompletableFuture().get();
        }
    }

    private static long sum(JsonNode counts) {
        long t = 0;
        for (JsonNode c : counts) {
            t += c.asLong();
        }
        return t;
    }
}
