package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replays published vLLM measurements (bench/fidelity/published-vllm.csv, cited in bench/fidelity/README.md) through
 * {@code infersim simulate} with the bundled GPU profiles and fails when a point leaves its stated tolerance. A point
 * marked {@code known-miss} is one the simulator is known to miss (the README says why); the test fails when such a
 * point comes within its tolerance, so the CSV and README are corrected rather than left stale (a strict expected
 * failure). Prints the table the README shows.
 */
class PublishedVllmPointsTest {
    private static final Path FIDELITY = Path.of("..", "bench", "fidelity");
    private static final Path POINTS = FIDELITY.resolve("published-vllm.csv");
    private static final ObjectMapper JSON = new ObjectMapper();

    record Point(String id, String source, String gpu, String model, int tp, boolean moe, String args, String metric,
                 double published, double tolerancePct, boolean knownMiss) {
    }

    static List<Point> points() throws IOException {
        List<Point> points = new ArrayList<>();
        for (String line : Files.readAllLines(POINTS)) {
            if (line.isBlank() || line.startsWith("#") || line.startsWith("id,")) {
                continue;
            }
            String[] f = line.split(",");
            assertEquals(11, f.length, line);
            assertTrue(f[10].equals("held") || f[10].equals("known-miss"), "status held or known-miss: " + line);
            points.add(new Point(f[0], f[1], f[2], f[3], Integer.parseInt(f[4]), f[5].equals("yes"), f[6], f[7],
                    Double.parseDouble(f[8]), Double.parseDouble(f[9]), f[10].equals("known-miss")));
        }
        return points;
    }

    /** Simulated value of the point's metric, a key of the result JSON, in that key's unit. */
    static double simulate(Point p, Path dir) throws IOException {
        List<String> args = new ArrayList<>(List.of("simulate", "--gpu", p.gpu(), "--model", p.model(),
                "--tensor-parallel-size", String.valueOf(p.tp()), "--seed", "0",
                "--percentile-metrics", "ttft,tpot,itl,e2el", "--save-result", "--result-dir", dir.toString(),
                "--result-filename", p.id() + ".json"));
        args.addAll(Arrays.asList(p.args().trim().split("\\s+")));
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, run.exitCode(), p.id() + ": " + run.err());
        JsonNode value = JSON.readTree(dir.resolve(p.id() + ".json").toFile()).get(p.metric());
        assertTrue(value != null && value.isNumber(), p.id() + ": no numeric " + p.metric() + " in the result");
        return value.asDouble();
    }

    @Test
    void everyHeldPointIsWithinItsToleranceAndEveryKnownMissIsStillOutside(@TempDir Path dir) throws IOException {
        List<Point> points = points();
        assertFalse(points.isEmpty(), "no points in " + POINTS.toAbsolutePath());
        StringBuilder table = new StringBuilder(
                "| id | GPU | model | TP | metric | published | simulated | error | status |\n"
                        + "|---|---|---|---|---|---|---|---|---|\n");
        StringBuilder failures = new StringBuilder();
        for (Point p : points) {
            double simulated = simulate(p, dir);
            double error = 100 * (simulated / p.published() - 1);
            boolean within = Math.abs(error) <= p.tolerancePct();
            table.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %s | %.2f | %.2f | %+.1f%% | %s |%n",
                    p.id(), p.gpu(), p.model(), p.tp(), p.metric(), p.published(), simulated,
                    error, p.knownMiss() ? "known miss" : "held"));
            if (!within && !p.knownMiss()) {
                failures.append(String.format(Locale.ROOT, "%n%s: simulated %.1f against %.1f published (%+.1f%%, "
                        + "tolerance %.0f%%)", p.id(), simulated, p.published(), error, p.tolerancePct()));
            } else if (within && p.knownMiss()) {
                failures.append(String.format(Locale.ROOT, "%n%s: a known miss now within its tolerance (%+.1f%%): "
                        + "mark it held in the CSV and the README", p.id(), error));
            }
        }
        System.out.print(table);
        assertEquals("", failures.toString(), "published vLLM points whose status no longer holds");
    }

    @Test
    void everySourceOfAPointIsCitedInTheReadme() throws IOException {
        String readme = Files.readString(FIDELITY.resolve("README.md"));
        for (Point p : points()) {
            assertTrue(readme.contains("`" + p.source() + "`"), p.id() + ": source " + p.source()
                    + " is not cited in bench/fidelity/README.md");
        }
    }
}
