package dev.infersim.engine;

import dev.infersim.engine.calibration.Calibrator;
import dev.infersim.engine.calibration.MeasurementFile;
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
 * Replays every committed measurement (configs/measurements/*.csv; not the earlier kernels' tables in its
 * unfused-kernels/ folder, which no bundled profile is fitted to) through the bundled profile of the GPU it was
 * measured on: per GPU, model, dtype and tensor parallelism, the median error of the steps must stay within 8% and the
 * largest within 20%. All-reduces alone are their own groups with the largest error allowed 25%: the model's two NCCL
 * protocols miss the step near 2 MB where NCCL changes protocol (-21% for 128 tokens of hidden size 8192 at TP2).
 * Known misses have their own ceilings, so they still fail when they drift.
 */
class MeasuredStepTimesTest {
    private static final Path MEASUREMENTS = Path.of("..", "configs", "measurements");
    /**
     * Group, then the largest median and maximum error allowed. Mixtral-8x7B's shard on the H100: the fused MoE layer's
     * 512-token prefill step is 20% slower than its neighbours (the tile the kit picks for 128 rows per expert), which a
     * model smooth in the token count cannot follow (bench/calibration/README.md). Llama-3.1-70B's eighth on the H200:
     * at a TP8 width each layer's fixed cost is a third of the step, more than the whole-model fit puts on a layer; a
     * refit waits for real eight-GPU steps (bench/calibration/README.md, "tensor parallelism 8").
     */
    private static final Map<String, double[]> KNOWN_MISSES = Map.of(
            "h100 mixtral-8x7b bf16 tp2 shard", new double[] {0.08, 0.25},
            "h200 llama-3.1-70b bf16 tp8 shard", new double[] {0.22, 0.30});
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
                Calibrator.Measurement m = c.rows().get(i);
                errors.computeIfAbsent(gpu + " " + m.group() + (m.isAllReduce() ? " allreduce" : ""), k -> new ArrayList<>())
                        .add(e[i]);
            }
        }
        StringBuilder failures = new StringBuilder();
        for (Map.Entry<String, List<Double>> g : errors.entrySet()) {
            double[] e = g.getValue().stream().mapToDouble(Double::doubleValue).toArray();
            double median = Calibrator.medianAbs(e);
            double max = Calibrator.maxAbs(e);
            double[] limit = KNOWN_MISSES.getOrDefault(g.getKey(),
                    new double[] {0.08, g.getKey().endsWith(" allreduce") ? 0.25 : 0.20});
            if (median > limit[0] || max > limit[1]) {
                failures.append(String.format("%n%s: median %.1f%%, max %.1f%% over %d steps", g.getKey(), 100 * median, 100 * max, e.length));
            }
        }
        assertEquals("", failures.toString(), "measured step times outside median 8% / max 20%");
        assertTrue(errors.keySet().stream().anyMatch(k -> k.startsWith("h100 mixtral-8x7b bf16 tp2 shard")), "MoE shards replayed");
        assertTrue(errors.keySet().stream().anyMatch(k -> k.startsWith("h100 llama-2-70b bf16 tp4 shard")), "TP4 shards replayed");
        assertTrue(errors.keySet().stream().anyMatch(k -> k.startsWith("h100 llama-2-7b bf16 tp1")), "multi-head attention replayed");
        assertTrue(errors.keySet().stream().anyMatch(k -> k.startsWith("h200 llama-3.1-70b bf16 tp2")), "tensor-parallel steps replayed");
        assertTrue(errors.containsKey("h200 llama-3.1-405b bf16 tp8 shard"), "TP8 shards replayed");
    }
}
