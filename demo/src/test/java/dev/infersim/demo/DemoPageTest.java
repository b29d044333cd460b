package dev.infersim.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.result.ResultJson;
import dev.infersim.server.HeadlessBrowser;
import dev.infersim.server.PageLayout;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The demo's page drawn from a committed comparison (a real {@code demo --quick} run's) and from variants of it with
 * planted features, in a real headless Chromium, checked as a reader would look: no label cut, covered or wrapped,
 * axes named with their units, knees told apart or sharing one marker, no measured line across an overloaded stretch
 * nobody measured, no throughput above the engine's capacity. A screenshot is left at {@code target/demo-page.png}.
 */
class DemoPageTest {
    @TempDir
    static Path dir;
    private static ObjectNode committed;
    private static DemoPage.Story story;

    @BeforeAll
    static void readTheCommittedRun() throws Exception {
        committed = (ObjectNode) ResultJson.mapper().readTree(Path.of("src", "test", "resources", "results",
                "demo-quick.json").toFile());
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        var run = Simulation.single(EngineCore.create(d), SimulationOptions.defaults(), null).run(Workload.open(
                WorkloadSpec.builder().datasetName("random").randomInputLen(512).randomOutputLen(1024).eosMeanTokens(128)
                        .requestRate(48.36).numPrompts(600).seed(1).build()));
        story = new DemoPage.Story("llama-3.1-8b on h100, the committed quick run.", EngineSummary.of(d, 640), null,
                new DemoPage.KneeTimeline(run.timeline().columns(), 48.36), ResultJson.mapper().createObjectNode()
                .put("infersim_version", "test"));
    }

    /** The committed comparison changed by {@code change}, drawn, opened; the browser is left on it. */
    private static void open(HeadlessBrowser browser, String name, Consumer<ObjectNode> change) throws Exception {
        ObjectNode data = committed.deepCopy();
        change.accept(data);
        Path page = dir.resolve(name + ".html");
        DemoPage.write(page, ResultJson.mapper().treeToValue(data, DemoResult.class), story);
        browser.open(page.toUri().toString());
        assertEquals(0, browser.eval("document.querySelectorAll('.report-error').length").asInt(),
                name + ": " + browser.eval("document.body.innerText").asText());
        assertEquals(List.of(), PageLayout.problems(browser), name + ": what a reader would see wrong");
    }

    private static List<String> kneeLegend(HeadlessBrowser browser) {
        List<String> legend = new ArrayList<>();
        browser.eval("echarts.getInstanceByDom(document.getElementById('chart-ttft-p99')).getOption().legend[1].data")
                .forEach(n -> legend.add(n.asText()));
        return legend;
    }

    @Test
    void kneesTooCloseToTellApartShareOneMarkerWithEveryValue() throws Exception {
        assumeTrue(HeadlessBrowser.available(), HeadlessBrowser.BINARY + " is not installed");
        try (HeadlessBrowser browser = new HeadlessBrowser(dir.resolve("profile"))) {
            open(browser, "close", data -> { });
            List<String> legend = kneeLegend(browser);
            assertEquals(1, legend.size(), legend.toString());
            assertTrue(legend.get(0).matches("knees, req/s: predicted 53\\.7 · simulated 54\\.6 · measured 55\\.2"),
                    legend.toString());
            browser.screenshot(Path.of("target", "demo-page.png"));

            open(browser, "apart", data -> ((ObjectNode) data.get("knee_rate_per_s")).put("measured", 40.0));
            List<String> apart = kneeLegend(browser);
            assertEquals(2, apart.size(), apart.toString());
            assertTrue(apart.get(0).startsWith("measured knee 40 req/s"), apart.toString());
            assertTrue(apart.get(1).startsWith("knees, req/s: predicted 53.7 · simulated 54.6"), apart.toString());
        }
    }

    /**
     * Between two runs past the knee nothing was measured: the measured line is broken there (and between the last
     * run below the knee and the first past it), its points still drawn.
     */
    @Test
    void noMeasuredLineCrossesAnOverloadedStretchNobodyMeasured() throws Exception {
        assumeTrue(HeadlessBrowser.available(), HeadlessBrowser.BINARY + " is not installed");
        try (HeadlessBrowser browser = new HeadlessBrowser(dir.resolve("profile"))) {
            open(browser, "overloaded", data -> {
                ArrayNode rows = (ArrayNode) data.get("rows");
                ((ObjectNode) rows.get(1)).put("measured_valid", true).putArray("measured_invalid_reasons");
                ObjectNode extra = rows.get(2).deepCopy();
                extra.put("request_rate", 65.0);
                ((ObjectNode) extra.get("measured")).put("p99_ttft_ms", 2000.0);
                rows.insert(2, extra);
            });
            JsonNode line = browser.eval("echarts.getInstanceByDom(document.getElementById('chart-ttft-p99')).getOption()"
                    + ".series.find(s=>s.name==='measured').data");
            List<String> drawn = new ArrayList<>();
            line.forEach(p -> drawn.add(p.get(1).isNull() ? "gap" : String.valueOf(Math.round(p.get(0).asDouble()))));
            assertEquals(List.of("27", "48", "gap", "65", "gap", "86"), drawn, line.toString());
        }
    }

    /**
     * The throughput chart shows what the engine served, so no curve rises above its capacity (the highest knee's
     * upper bound, in requests completed per second), and a run flagged invalid is drawn apart from the valid ones: the
     * committed run's at 48 req/s, and one planted at 27 req/s.
     */
    @Test
    void noThroughputAboveTheEnginesCapacityAndInvalidRunsDrawnAsSuch() throws Exception {
        assumeTrue(HeadlessBrowser.available(), HeadlessBrowser.BINARY + " is not installed");
        try (HeadlessBrowser browser = new HeadlessBrowser(dir.resolve("profile"))) {
            open(browser, "invalid", data -> {
                ObjectNode row = (ObjectNode) data.get("rows").get(0);
                row.put("measured_valid", false);
                row.putArray("measured_invalid_reasons").add("a planted reason");
            });
            double capacity = 0;
            for (JsonNode ci : committed.get("knee_rate_ci95")) {
                capacity = Math.max(capacity, ci.isArray() ? ci.get(1).asDouble() : 0);
            }
            capacity = Math.max(capacity, committed.get("knee_rate_per_s").get("predicted").asDouble());
            JsonNode series = browser.eval("echarts.getInstanceByDom(document.getElementById('chart-throughput'))"
                    + ".getOption().series.filter(s=>s.type==='line'||s.type==='scatter').map(s=>[s.name,s.data.map(d=>d[1])])");
            for (JsonNode s : series) {
                for (JsonNode y : s.get(1)) {
                    assertTrue(y.isNull() || y.asDouble() <= capacity, s.get(0).asText() + " at " + y + " above "
                            + capacity + " req/s");
                }
            }
            JsonNode invalid = browser.eval("echarts.getInstanceByDom(document.getElementById('chart-ttft-p99')).getOption()"
                    + ".series.find(s=>s.name==='measured, run flagged invalid').data");
            assertEquals(2, invalid.size(), invalid.toString());
            assertEquals(27, invalid.get(0).get(0).asDouble(), 1);
            assertEquals(48, invalid.get(1).get(0).asDouble(), 1);
        }
    }
}
