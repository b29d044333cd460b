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
        JsonNode result = new ObjectMapper().readTree(json.toFile());
        assertKneesAgree(result, run);
        String page = Files.readString(html);
        assertTrue(page.contains("echarts"), "the page embeds its charting library");
        JsonNode data = new ObjectMapper().readTree(page.substring(page.indexOf("const DATA = ") + 13,
                page.indexOf(";\n", page.indexOf("const DATA = "))));
        for (JsonNode row : data.get("comparison").get("rows")) {
            for (String method : List.of("measured", "simulated", "predicted")) {
                assertTrue(row.get(method).has("p99_ttft_ms"), "each rate carries the " + method + " series: " + row);
            }
        }
        JsonNode rows = data.get("comparison").get("rows");
        assertEquals(3, rows.size(), "below, near and past the knee");
        assertTrue(rows.get(2).get("predicted").get("p99_ttft_ms").isNull(),
                "past the knee the prediction has no number (the page says unstable)");
        assertTrue(rows.get(0).get("measured").get("p99_ttft_ms_ci95").isArray(), "each measured percentile has its interval");
        assertTrue(data.get("comparison").get("simulated_curve").size() >= 20, "the simulated curve is dense");
        assertTrue(data.get("comparison").get("predicted_curve").size() >= 20, "the prediction is drawn as a curve");
        assertEquals(rows.get(1).get("request_rate").asDouble(), data.get("timeline").get("request_rate").asDouble(), 1e-9,
                "the timeline is the run nearest the knee, not the most overloaded one");
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
        assertKneesAgree(result, run);
        JsonNode light = result.get("rows").get(0);
        assertEquals(5.0, light.get("simulated").get("median_tpot_ms").asDouble(), 1e-6, "every token 5 ms apart");
        assertEquals(5.0, light.get("predicted").get("median_tpot_ms").asDouble(), 1e-6);
        assertEquals(20.0, light.get("simulated").get("median_ttft_ms").asDouble(), 1e-6, "at half load most never wait");
        String page = Files.readString(html);
        assertTrue(page.contains("\"engine\":null") && page.contains("an M/G/c queue with c = --max-num-seqs"),
                "the page describes the timing instead of the engine's step times");
    }

    /**
     * The simulated knee within 10% of the predicted one, and the measured knee too when the client kept its schedule.
     * A measured run on a machine too busy to send on time is wall-clock evidence of nothing; the demo must then say
     * so beside the numbers, which is what is checked instead.
     */
    private static void assertKneesAgree(JsonNode result, CliRun run) {
        JsonNode knee = result.get("knee_rate_per_s");
        double predicted = knee.get("predicted").asDouble();
        for (String method : List.of("measured", "simulated")) {
            JsonNode ci = result.get("knee_rate_ci95").get(method);
            assertTrue(ci.isArray() && ci.get(0).asDouble() <= knee.get(method).asDouble()
                    && ci.get(1).asDouble() >= knee.get(method).asDouble(), method + " knee's interval: " + ci);
        }
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
            assertTrue(run.out().contains("(run flagged invalid: "), "an invalid measured run is named in the table: " + run.out());
        }
    }
}
