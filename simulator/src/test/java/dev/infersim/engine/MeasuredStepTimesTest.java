package dev.infersim.engine;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replays every committed measurement (configs/measurements/*.csv) through the bundled profile of the GPU it was
 * measured on: per GPU, model, dtype and tensor parallelism, the median error must stay within 8% and the largest
 * within 20%.
 */
class MeasuredStepTimesTest {
    private static final Path MEASUREMENTS = Path.of("..", "configs", "measurements");
    private static final Map<String, String> PROFILE_BY_GPU = Map.of("NVIDIA H100 80GB HBM3", "h100", "NVIDIA H200", "h200");

    @Test
    void everyMeasuredStepIsWithinTolerance() throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(MEASUREMENTS)) {
            files = s.filter(p -> p.toString().endsWith(".csv")).sorted().toList();
        }
        assertFalse(files.isEmpty(), "no measurements under " + MEASUREMENTS.toAbsolutePath());
        Map<String, List<Double>> errors = new TreeMap<>();
        for (Path file : files) {
            Deployment defaults = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
            MeasurementFile.Contents c = MeasurementFile.read(file, "measurements", defaults);
            String gpu = PROFILE_BY_GPU.get(c.header().get("gpu"));
            assertTrue(gpu != null, file + ": no bundled profile for GPU '" + c.header().get("gpu") + "'");
            double[] e = Calibrator.errors(Profiles.gpu(gpu), c.rows());
            for (int i = 0; i < e.length; i++) {
                errors.computeIfAbsent(gpu + " " + c.rows().get(i).group(), k -> new ArrayList<>()).add(e[i]);
            }
        }
        StringBuilder failures = new StringBuilder();
        for (Map.Entry<String, List<Double>> g : errors.entrySet()) {
            double[] e = g.getValue().stream().mapToDouble(Double::doubleValue).toArray();
            double median = Calibrator.medianAbs(e);
            double max = Calibrator.maxAbs(e);
            if (median > 0.08 || max > 0.20) {
                failures.append(String.format("%n%s: median %.1f%%, max %.1f%% over %d steps", g.getKey(), 100 * median, 100 * max, e.length));
            }
        }
        assertEquals("", failures.toString(), "measured step times outside median 8% / max 20%");
        assertTrue(errors.keySet().stream().anyMatch(k -> k.startsWith("h100 mixtral")), "MoE measurements replayed");
        assertTrue(errors.keySet().stream().anyMatch(k -> k.startsWith("h200 llama-3.1-70b bf16 tp2")), "tensor-parallel steps replayed");
    }
}
