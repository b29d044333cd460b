package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DemoCommandTest {

    @Test
    void demoFindsTheSameKneeThreeWaysAndDrawsAllThreeSeries(@TempDir Path dir) throws Exception {
        Path html = dir.resolve("demo.html");
        Path json = dir.resolve("demo.json");
        CliRun run = CliRun.of("demo", "--quick", "--html", html.toString(), "--save-result", json.toString());

        assertEquals(0, run.exitCode(), run.out() + run.err());
        assertTrue(run.out().contains("measured / simulated / predicted"), run.out());
        assertTrue(run.out().contains("knee (capacity), req/s:"), run.out());
        JsonNode knee = new ObjectMapper().readTree(json.toFile()).get("knee_rate_per_s");
        double predicted = knee.get("predicted").asDouble();
        List<String> methods = List.of("measured", "simulated");
        for (String method : methods) {
            assertTrue(knee.get(method).isNumber(), method + " found no knee: " + run.out());
            assertEquals(predicted, knee.get(method).asDouble(), 0.10 * predicted, method + " knee vs predicted: " + knee);
        }
        String page = Files.readString(html);
        assertTrue(page.contains("echarts"), "the page embeds its charting library");
        JsonNode data = new ObjectMapper().readTree(page.substring(page.indexOf("const DATA = ") + 13,
                page.indexOf(";\n", page.indexOf("const DATA = "))));
        for (JsonNode row : data.get("comparison").get("rows")) {
            for (String method : List.of("measured", "simulated", "predicted")) {
                assertTrue(row.get(method).has("p99_ttft_ms"), "each rate carries the " + method + " series: " + row);
            }
        }
        assertTrue(data.get("comparison").get("rows").get(1).get("predicted").get("p99_ttft_ms").isNull(),
                "past the knee the prediction has no number (the page says unstable)");
        assertTrue(data.get("timeline").get("running").size() > 10, "a timeline of the run near the knee");
        for (String key : List.of("infersim_version", "infersim_workload", "infersim_demo_time_scale", "infersim_machine")) {
            assertTrue(data.get("metadata").has(key), "the page carries " + key);
        }
    }

    @Test
    void badFractionIsOneLine() {
        CliRun run = CliRun.of("demo", "--loads", "0,0.5");
        assertEquals(2, run.exitCode());
        assertEquals("infersim: --loads: fractions must be in (0, 3], got 0.0", run.err().strip());
    }
}
