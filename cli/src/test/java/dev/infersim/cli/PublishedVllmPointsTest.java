package dev.infersim.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replays vLLM's own published measurements (bench/fidelity/published-vllm.csv, cited in bench/fidelity/README.md)
 * through {@code infersim simulate} with the bundled profiles and fails when any simulated value leaves the point's
 * stated tolerance. Prints the table the README shows.
 */
class PublishedVllmPointsTest {
    private static final Path POINTS = Path.of("..", "bench", "fidelity", "published-vllm.csv");
    private static final Pattern MEAN_E2EL = Pattern.compile("\"mean_e2el_ms\"\\s*:\\s*([0-9.]+)");

    record Point(String id, String source, String gpu, String model, int tp, boolean moe, String args, String metric,
                 double publishedMs, double tolerancePct) {
    }

    static List<Point> points() throws IOException {
        List<Point> points = new ArrayList<>();
        for (String line : Files.readAllLines(POINTS)) {
            if (line.isBlank() || line.startsWith("#") || line.startsWith("id,")) {
                continue;
            }
            String[] f = line.split(",");
            assertEquals(10, f.length, line);
            points.add(new Point(f[0], f[1], f[2], f[3], Integer.parseInt(f[4]), f[5].equals("yes"), f[6], f[7],
                    Double.parseDouble(f[8]), Double.parseDouble(f[9])));
        }
        return points;
    }

    /** Simulated value of the point's metric, in ms. */
    static double simulate(Point p, Path dir) throws IOException {
        assertEquals("mean_e2el_ms", p.metric(), p.id() + ": only mean_e2el_ms is replayed so far");
        List<String> args = new ArrayList<>(List.of("simulate", "--gpu", p.gpu(), "--model", p.model(),
                "--tensor-parallel-size", String.valueOf(p.tp()), "--dataset-name", "random", "--ignore-eos",
                "--request-rate", "inf", "--seed", "0", "--percentile-metrics", "e2el", "--save-result",
                "--result-dir", dir.toString(),
                "--result-filename", p.id() + ".json"));
        args.addAll(Arrays.asList(p.args().trim().split("\\s+")));
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, run.exitCode(), p.id() + ": " + run.err());
        String json = Files.readString(dir.resolve(p.id() + ".json"));
        Matcher m = MEAN_E2EL.matcher(json);
        assertTrue(m.find(), json);
        return Double.parseDouble(m.group(1));
    }

    @Test
    void everyPublishedPointIsWithinItsTolerance(@TempDir Path dir) throws IOException {
        List<Point> points = points();
        assertFalse(points.isEmpty(), "no points in " + POINTS.toAbsolutePath());
        StringBuilder table = new StringBuilder("| id | GPU | model | TP | published ms | simulated ms | error |\n|---|---|---|---|---|---|---|\n");
        StringBuilder failures = new StringBuilder();
        for (Point p : points) {
            double simulated = simulate(p, dir);
            double error = 100 * (simulated / p.publishedMs() - 1);
            table.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %.1f | %.1f | %+.1f%% |%n", p.id(), p.gpu(),
                    p.model(), p.tp(), p.publishedMs(), simulated, error));
            if (Math.abs(error) > p.tolerancePct()) {
                failures.append(String.format(Locale.ROOT, "%n%s: simulated %.1f ms against %.1f published (%+.1f%%, "
                        + "tolerance %.0f%%)", p.id(), simulated, p.publishedMs(), error, p.tolerancePct()));
            }
        }
        System.out.print(table);
        assertEquals("", failures.toString(), "published vLLM points outside their tolerance");
    }
}
