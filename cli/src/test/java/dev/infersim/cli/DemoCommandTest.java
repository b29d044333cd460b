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

    /** The simplest case: fixed latencies make the deployment an M/G/c queue, and the three methods find its knee. */
    @Test
    void fixedTimingIsTheMgcQueueThreeWays(@TempDir Path dir) throws Exception {
        Path html = dir.resolve("demo.html");
        Path json = dir.resolve("demo.json");
        CliRun run = CliRun.of("demo", "--quick", "--timing", "fixed", "--time-to-first-token", "20", "--inter-token-latency",
                "5", "--max-num-seqs", "32", "--html", html.toString(), "--save-result", json.toString());

        assertEquals(0, run.exitCode(), run.out() + run.err());
        assertTrue(run.out().contains("fixed timing (TTFT 20 ms, inter-token latency 5 ms), 32 slots"), run.out());
        JsonNode result = new ObjectMapper().readTree(json.toFile());
        assertTrue(result.get("predictor").asText().startsWith("M/G/c queue"), result.toString());
        // 32 slots over a mean service of 20 + 127 x 5 ms (geometric outputs of mean 128, at most 1024)
        double predicted = result.get("knee_rate_per_s").get("predicted").asDouble();
        assertEquals(32 / 0.655, predicted, 0.03 * predicted);
        for (String method : List.of("measured", "simulated")) {
            assertEquals(predicted, result.get("knee_rate_per_s").get(method).asDouble(), 0.10 * predicted,
                    method + " knee vs predicted: " + result.get("knee_rate_per_s"));
        }
        JsonNode light = result.get("rows").get(0);
        assertEquals(5.0, light.get("simulated").get("median_tpot_ms").asDouble(), 1e-6, "every token 5 ms apart");
        assertEquals(5.0, light.get("predicted").get("median_tpot_ms").asDouble(), 1e-6);
        assertEquals(20.0, light.get("simulated").get("median_ttft_ms").asDouble(), 1e-6, "at half load most never wait");
        String page = Files.readString(html);
        assertTrue(page.contains("\"engine\":null") && page.contains("an M/G/c queue with c = --max-num-seqs"),
                "the page describes the timing instead of the engine's step times");
    }
}
