package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.demo.DemoClosedLoop;
import dev.infersim.server.HeadlessBrowser;
import dev.infersim.server.PageLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code demo --quick} run once with the engine model and once with fixed timing; the tests read their results and
 * open their pages in headless Chromium as a reader would. Screenshots of both pages are left in {@code target/}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DemoCommandTest {
    private Path dir;
    private CliRun engine;
    private CliRun fixed;

    /**
     * At a fixed time scale (2x, its error still measured once and reported): under --time-scale auto a busy machine
     * slows the mock to 0.2x, which would make these two runs minutes long.
     */
    @BeforeAll
    void runTheQuickDemoTwice() throws IOException {
        dir = Files.createTempDirectory("demo-test");
        engine = CliRun.of("demo", "--quick", "--time-scale", "2", "--html", dir.resolve("demo.html").toString(), "--save-result",
                dir.resolve("demo.json").toString());
        fixed = CliRun.of("demo", "--quick", "--time-scale", "2", "--timing", "fixed", "--time-to-first-token", "20", "--inter-token-latency",
                "5", "--max-num-seqs", "32", "--html", dir.resolve("fixed.html").toString(), "--save-result",
                dir.resolve("fixed.json").toString());
    }

    @AfterAll
    void removeTheRuns() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    @Test
    @Tag("wallclock") // the measured knee against the simulated one
    void demoFindsTheSameKneeThreeWaysAndDrawsAllThreeSeries() throws Exception {
        assertEquals(0, engine.exitCode(), engine.out() + engine.err());
        assertTrue(engine.out().contains("measured / simulated / predicted"), engine.out());
        assertTrue(engine.out().contains("knee (capacity), req/s:"), engine.out());
        JsonNode result = new ObjectMapper().readTree(dir.resolve("demo.json").toFile());
        assertKneesAgree(result, engine);
        String page = Files.readString(dir.resolve("demo.html"));
        assertTrue(page.contains("echarts"), "the page embeds its charting library");
        JsonNode data = new ObjectMapper().readTree(page.substring(page.indexOf("const DATA = ") + 13,
                page.indexOf(";\n", page.indexOf("const DATA = "))));
        JsonNode rows = data.get("comparison").get("rows");
        for (JsonNode row : rows) {
            for (String method : List.of("measured", "simulated", "predicted")) {
                assertTrue(row.get(method).has("p99_ttft_ms"), "each rate carries the " + method + " series: " + row);
            }
        }
        assertEquals(3, rows.size(), "below, near and past the knee");
        assertTrue(rows.get(2).get("predicted").get("p99_ttft_ms").isNull(),
                "past the knee the prediction has no number (the page says unstable)");
        assertTrue(rows.get(0).get("measured").get("p99_ttft_ms_ci95").isArray(), "each measured percentile has its interval");
        assertTrue(data.get("comparison").get("simulated_curve").size() >= 20, "the simulated curve is dense");
        assertTrue(data.get("comparison").get("predicted_curve").size() >= 20, "the prediction is drawn as a curve");
        assertEquals(rows.get(1).get("request_rate").asDouble(), data.get("timeline").get("request_rate").asDouble(), 1e-9,
                "the timeline is the run nearest the knee, not the most overloaded one");
        assertTrue(data.get("timeline").get("running").size() > 10, "a timeline of the run near the knee");
        assertTrue(data.get("comparison").get("stability").get("words").asText().startsWith("Conclusions"),
                "the page says whether its conclusions are stable");
        for (String key : List.of("infersim_version", "infersim_workload", "infersim_demo_time_scale", "infersim_machine")) {
            assertTrue(data.get("metadata").has(key), "the page carries " + key);
        }
    }

    /** After the open loop's conclusions, the closed loop (engine model only): saved, printed, one point per N. */
    @Test
    void demoAddsTheClosedLoopAfterTheConclusions() throws Exception {
        assertEquals(0, engine.exitCode(), engine.out() + engine.err());
        assertTrue(engine.out().indexOf("Closed loop: N clients") > engine.out().indexOf("knee (capacity), req/s:"),
                engine.out());
        JsonNode closed = new ObjectMapper().readTree(dir.resolve("demo.json").toFile()).get("closed_loop");
        List<Integer> n = new ArrayList<>();
        closed.get("points").forEach(p -> n.add(p.get("max_concurrency").asInt()));
        int limit = closed.get("batch_limit").asInt();
        assertEquals(DemoClosedLoop.concurrencies(limit), n, closed.toString());
        for (JsonNode p : closed.get("points")) {
            int clients = p.get("max_concurrency").asInt();
            assertEquals(clients, p.get("simulated").get("throughput_times_mean_e2el").asDouble(),
                    DemoClosedLoop.LITTLES_LAW_TOLERANCE * clients, "Little's law in the simulation: " + p);
        }
        assertEquals(0, fixed.exitCode(), fixed.out() + fixed.err());
        assertTrue(new ObjectMapper().readTree(dir.resolve("fixed.json").toFile()).get("closed_loop").isNull(),
                "fixed timing has no closed-loop prediction");
        assertTrue(fixed.out().contains("Closed loop: not run under --timing fixed"), fixed.out());
    }

    @Test
    void badFractionIsOneLine() {
        CliRun run = CliRun.of("demo", "--loads", "0,0.5");
        assertEquals(2, run.exitCode());
        assertEquals("infersim: --loads: fractions must be in (0, 3], got 0.0", run.err().strip());
    }

    /** The simplest case: fixed latencies make the deployment an M/G/c queue, and the three methods find its knee. */
    @Test
    @Tag("wallclock") // the measured knee against the simulated and predicted ones
    void fixedTimingIsTheMgcQueueThreeWays() throws Exception {
        assertEquals(0, fixed.exitCode(), fixed.out() + fixed.err());
        assertTrue(fixed.out().contains("fixed timing (TTFT 20 ms, inter-token latency 5 ms), 32 slots"), fixed.out());
        JsonNode result = new ObjectMapper().readTree(dir.resolve("fixed.json").toFile());
        assertTrue(result.get("predictor").asText().startsWith("M/G/c queue"), result.toString());
        // 32 slots over a mean service of 20 + 127 x 5 ms (geometric outputs of mean 128, at most 1024)
        double predicted = result.get("knee_rate_per_s").get("predicted").asDouble();
        assertEquals(32 / 0.655, predicted, 0.03 * predicted);
        assertKneesAgree(result, fixed);
        JsonNode light = result.get("rows").get(0);
        assertEquals(5.0, light.get("simulated").get("median_tpot_ms").asDouble(), 1e-6, "every token 5 ms apart");
        assertEquals(5.0, light.get("predicted").get("median_tpot_ms").asDouble(), 1e-6);
        assertEquals(20.0, light.get("simulated").get("median_ttft_ms").asDouble(), 1e-6, "at half load most never wait");
        String page = Files.readString(dir.resolve("fixed.html"));
        assertTrue(page.contains("\"engine\":null") && page.contains("an M/G/c queue with c = --max-num-seqs"),
                "the page describes the timing instead of the engine's step times");
    }

    /**
     * What a reader sees: no label over another or cut off, every series and knee marker inside its plot, each
     * knee found in the legend with its value (the simulated and predicted ones always), and the TTFT p99 chart showing the bend: the simulated curve rises
     * over its upper half of rates (across the knee) far more than over its lower half. The layout also holds when a
     * measured run is flagged invalid, whatever this machine's load did to this run.
     */
    @Test
    void bothPagesReadAtAGlanceInABrowser() throws Exception {
        assumeTrue(HeadlessBrowser.available(), HeadlessBrowser.BINARY + " is not installed");
        assertEquals(0, engine.exitCode(), engine.out() + engine.err());
        assertEquals(0, fixed.exitCode(), fixed.out() + fixed.err());
        try (HeadlessBrowser browser = new HeadlessBrowser(dir.resolve("profile"))) {
            for (String name : List.of("demo", "fixed")) {
                browser.open(dir.resolve(name + ".html").toUri().toString());
                assertEquals(0, browser.eval("document.querySelectorAll('.report-error').length").asInt(),
                        name + ": " + browser.eval("document.body.innerText").asText());
                assertEquals(List.of(), PageLayout.problems(browser), name + ": what a reader would see wrong");
                List<String> legend = new ArrayList<>();
                browser.eval("echarts.getInstanceByDom(document.getElementById('chart-ttft-p99')).getOption().legend[1].data")
                        .forEach(n -> legend.add(n.asText()));
                // a knee is in the legend where its method found one: the measured one rests on this machine's runs
                JsonNode knees = new ObjectMapper().readTree(dir.resolve(name + ".json").toFile()).get("knee_rate_per_s");
                assertTrue(knees.get("simulated").isNumber() && knees.get("predicted").isNumber(), name + ": " + knees);
                for (String method : List.of("measured", "simulated", "predicted")) {
                    // alone, or sharing one marker with knees too close to tell apart ("knees, req/s: ... measured 56")
                    boolean shown = legend.stream().anyMatch(l -> l.matches(method + " knee [0-9.]+ req/s.*")
                            || l.matches("knees, req/s: .*\\b" + method + " [0-9.]+\\b.*"));
                    assertEquals(knees.get(method).isNumber(), shown,
                            name + ": the " + method + " knee with its value in the legend where found: " + legend + " " + knees);
                }
                // the simulated curve, in virtual time, shows the bend whatever this machine's load did to the measured
                JsonNode p99 = browser.eval("echarts.getInstanceByDom(document.getElementById('chart-ttft-p99')).getOption()"
                        + ".series.find(s=>s.name==='simulated').data.filter(d=>d[1]!==null)");
                double first = p99.get(0).get(1).asDouble();
                double middle = p99.get(p99.size() / 2).get(1).asDouble();
                double last = p99.get(p99.size() - 1).get(1).asDouble();
                assertTrue(last / middle > 3 * (middle / first), name + ": the curve bends at the knee: " + p99);
                assertEquals(name.equals("demo"), browser.eval("!!document.getElementById('chart-closed-loop')").asBoolean(),
                        name + ": the closed-loop chart under the engine model only");
                browser.screenshot(Path.of("target", name.equals("demo") ? "demo-quick.png" : "demo-quick-fixed.png"));
            }
            // a machine too busy to send on time flags a measured run invalid, which adds a fourth legend entry
            String page = Files.readString(dir.resolve("fixed.html"));
            assertTrue(page.contains("\"measured_valid\":true"), "the page carries each run's validity");
            Files.writeString(dir.resolve("flagged.html"), page.replaceFirst("\"measured_valid\":true", "\"measured_valid\":false"));
            browser.open(dir.resolve("flagged.html").toUri().toString());
            assertEquals(List.of(), PageLayout.problems(browser), "with a run flagged invalid: what a reader would see wrong");
        }
    }

    /**
     * The simulated knee within 10% of the predicted one, and the measured knee too when the client kept its schedule;
     * each with its interval. A measured run on a machine too busy to send on time is wall-clock evidence of nothing;
     * the demo must then say so beside the numbers, which is what is checked instead.
     */
    private static void assertKneesAgree(JsonNode result, CliRun run) {
        JsonNode knee = result.get("knee_rate_per_s");
        double predicted = knee.get("predicted").asDouble();
        assertTrue(knee.get("simulated").isNumber(), "simulated found no knee: " + run.out());
        assertEquals(predicted, knee.get("simulated").asDouble(), 0.10 * predicted, "simulated knee vs predicted: " + knee);
        boolean measuredValid = true;
        for (JsonNode row : result.get("rows")) {
            measuredValid &= row.get("measured_valid").asBoolean();
        }
        if (measuredValid) {
            assertTrue(knee.get("measured").isNumber(), "measured found no knee: " + run.out());
            assertEquals(predicted, knee.get("measured").asDouble(), 0.10 * predicted, "measured knee vs predicted: " + knee);
        } else {
            assertTrue(run.out().contains("(run flagged invalid"), "an invalid measured run is named in the table: " + run.out());
        }
        for (String method : List.of("measured", "simulated")) {
            JsonNode ci = result.get("knee_rate_ci95").get(method);
            if (knee.get(method).isNumber()) {
                assertTrue(ci.isArray() && ci.get(0).asDouble() <= knee.get(method).asDouble()
                        && ci.get(1).asDouble() >= knee.get(method).asDouble(), method + " knee's interval: " + ci);
            }
        }
    }
}
