package dev.infersim.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DemoCommandTest {

    @Test
    void demoComparesMeasuredSimulatedAndPredictedAndWritesReports(@TempDir Path dir) throws Exception {
        Path html = dir.resolve("demo.html");
        Path json = dir.resolve("demo.json");
        CliRun run = CliRun.of("demo", "--loads", "0.3,0.6", "--num-prompts", "40", "--num-warmups", "5",
                "--time-scale", "4", "--html", html.toString(), "--save-result", json.toString());

        assertEquals(0, run.exitCode(), run.out() + run.err());
        assertTrue(run.out().contains("measured / simulated / predicted"), run.out());
        assertTrue(run.out().contains("saturation rate, req/s:"), run.out());
        String comparison = Files.readString(json);
        assertTrue(comparison.contains("\"predicted_saturation_rate_per_s\"") && comparison.contains("\"simulated\""), comparison);
        String page = Files.readString(html);
        assertTrue(page.contains("echarts"), "the HTML report embeds its charting library");
        for (String key : List.of("infersim_version", "infersim_workload", "infersim_demo_time_scale", "infersim_machine")) {
            assertTrue(page.contains("\"" + key + "\":"), "the report's runs carry " + key);
        }
    }

    @Test
    void badFractionIsOneLine() {
        CliRun run = CliRun.of("demo", "--loads", "0,0.5");
        assertEquals(2, run.exitCode());
        assertEquals("infersim: --loads: fractions must be in (0, 3], got 0.0", run.err().strip());
    }
}
