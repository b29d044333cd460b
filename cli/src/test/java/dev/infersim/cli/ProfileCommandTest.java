package dev.infersim.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProfileCommandTest {

    @Test
    void printsCsvWithTheDocumentedColumns() {
        CliRun run = CliRun.of("profile", "--gpu", "h100", "--model", "llama-3.1-8b", "--prefill-lens", "512,2048,8192",
                "--decode-batches", "1,8,64,256", "--contexts", "512,2048", "--format", "csv");
        assertEquals(0, run.exitCode(), run.err());
        List<String> lines = run.out().lines().toList();
        assertEquals("phase,batch,context_tokens,new_tokens,step_ms", lines.get(0));
        assertEquals(1 + 3 + 8, lines.size());
        assertTrue(lines.get(1).startsWith("prefill,1,0,512,"), lines.get(1));
        assertTrue(lines.get(4).startsWith("decode,1,512,1,"), lines.get(4));
        assertTrue(lines.get(11).startsWith("decode,256,2048,256,"), lines.get(11));
        assertTrue(run.err().contains("GPU KV cache size: "), run.err());
        assertTrue(run.err().contains("tokens/s"), run.err());
    }

    @Test
    void tableShowsKvCapacityAndSingleStreamSpeed() {
        CliRun run = CliRun.of("profile", "--model", "qwen2.5-1.5b", "--gpu", "h200");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().contains("qwen2.5-1.5b on h200 x1"), run.out());
        assertTrue(run.out().contains("GPU KV cache size:"), run.out());
    }

    @Test
    void unknownGpuIsOneLineNamingTheFlag() {
        CliRun run = CliRun.of("profile", "--gpu", "h800");
        assertEquals(2, run.exitCode());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().startsWith("infersim: --gpu: unknown name 'h800'; bundled: h100"), run.err());
    }

    @Test
    void deploymentThatDoesNotFitIsOneLineWithNumbers() {
        CliRun run = CliRun.of("profile", "--gpu", "l4", "--model", "llama-3.1-70b");
        assertEquals(2, run.exitCode());
        assertTrue(run.err().startsWith("infersim: llama-3.1-70b does not fit on l4 x1: weights need 141.1 GB"), run.err());
        assertEquals(1, run.err().lines().count());
    }

    @Test
    void dtypeFp8IsRefusedNamingQuantization() {
        CliRun run = CliRun.of("profile", "--dtype", "fp8");
        assertEquals(2, run.exitCode());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().startsWith("infersim: --dtype fp8: vLLM's --dtype takes only [auto, half, float16, bfloat16, "
                + "float, float32]; FP8 weights are --quantization fp8"), run.err());
        CliRun old = CliRun.of("profile", "--dtype", "bf16");
        assertEquals(2, old.exitCode());
        assertTrue(old.err().contains("--dtype bf16: vLLM spells it bfloat16"), old.err());
        CliRun kv = CliRun.of("profile", "--kv-cache-dtype", "bf16");
        assertEquals(2, kv.exitCode());
        assertTrue(kv.err().contains("--kv-cache-dtype bf16"), kv.err());
    }

    @Test
    void quantizationFp8KeepsTheKvCacheSixteenBitUnlessAsked() {
        String bf16 = kvTokens(CliRun.of("profile", "--dtype", "bfloat16", "--format", "csv"));
        String fp8Weights = kvTokens(CliRun.of("profile", "--quantization", "fp8", "--format", "csv"));
        String explicit = kvTokens(CliRun.of("profile", "--quantization", "fp8", "--kv-cache-dtype", "bfloat16", "--format", "csv"));
        String fp8Kv = kvTokens(CliRun.of("profile", "--quantization", "fp8", "--kv-cache-dtype", "fp8", "--format", "csv"));
        assertEquals(explicit, fp8Weights, "auto is the activation dtype");
        long base = Long.parseLong(bf16);
        long weights = Long.parseLong(fp8Weights);
        assertTrue(weights > base && weights < 1.2 * base, "FP8 weights free their 8 GB, no more: " + base + " -> " + weights);
        assertEquals(2 * weights, Long.parseLong(fp8Kv), 32, "an FP8 cache doubles the tokens");
        assertEquals(2, CliRun.of("profile", "--quantization", "awq").exitCode());
    }

    private static String kvTokens(CliRun run) {
        assertEquals(0, run.exitCode(), run.err());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("GPU KV cache size: ([0-9,]+) tokens").matcher(run.err());
        assertTrue(m.find(), run.err());
        return m.group(1).replace(",", "");
    }

    @Test
    void badNumberNamesTheFlag() {
        CliRun run = CliRun.of("profile", "--max-num-seqs", "lots");
        assertEquals(2, run.exitCode());
        assertTrue(run.err().contains("--max-num-seqs"), run.err());
        assertEquals(1, run.err().lines().count(), run.err());
    }

    @Test
    void calibrateWritesAProfileThatReproducesTheMeasurements(@TempDir Path dir) throws Exception {
        CliRun measured = CliRun.of("profile", "--gpu", "h200", "--format", "csv", "--prefill-lens", "128,512,2048,8192",
                "--decode-batches", "1,16,64,256", "--contexts", "512,4096");
        StringBuilder csv = new StringBuilder(measured.out().lines().findFirst().orElseThrow() + ",measured_ms\n");
        measured.out().lines().skip(1).forEach(l -> csv.append(l).append(',').append(l.substring(l.lastIndexOf(',') + 1)).append('\n'));
        Path file = dir.resolve("steps.csv");
        Files.writeString(file, csv);
        Path out = dir.resolve("fitted.yaml");
        // start from the H200 profile with two factors knocked off
        String h200 = new String(ProfileCommandTest.class.getClassLoader().getResourceAsStream("configs/gpus/h200.yaml").readAllBytes());
        Path start = dir.resolve("start.yaml");
        Files.writeString(start, h200.replaceFirst("gemm_bandwidth_efficiency: [0-9.]+", "gemm_bandwidth_efficiency: 0.5")
                .replaceFirst("attention_compute_efficiency: [0-9.]+", "attention_compute_efficiency: 0.3"));

        CliRun run = CliRun.of("calibrate", "--gpu", start.toString(), "--measurements", file.toString(), "--output", out.toString());

        assertEquals(0, run.exitCode(), run.err());
        String all = run.out().lines().filter(l -> l.startsWith("all ")).findFirst().orElseThrow();
        assertTrue(all.matches("all\\s+\\d+\\s+[1-9]\\d*\\.\\d% /\\s+\\S+%\\s+0\\.\\d% /\\s+0\\.\\d%"), "before off, after exact: " + all);
        assertTrue(run.out().contains("llama-3.1-8b,bf16,1,decode,64,4096,64,"), "every measurement is printed: " + run.out());
        CliRun again = CliRun.of("profile", "--gpu", out.toString(), "--format", "csv", "--prefill-lens", "128,512,2048,8192",
                "--decode-batches", "1,16,64,256", "--contexts", "512,4096");
        assertEquals(0, again.exitCode(), again.err());
        List<String> expected = measured.out().lines().skip(1).toList();
        List<String> actual = again.out().lines().skip(1).toList();
        for (int i = 0; i < expected.size(); i++) {
            double e = Double.parseDouble(expected.get(i).substring(expected.get(i).lastIndexOf(',') + 1));
            double a = Double.parseDouble(actual.get(i).substring(actual.get(i).lastIndexOf(',') + 1));
            assertEquals(e, a, 0.01 * e, expected.get(i));
        }
    }

    @Test
    void calibrateFitsTheKitsTableAndChecksTheHeldOutModels(@TempDir Path dir) {
        Path measured = Path.of("..", "configs", "measurements");
        CliRun run = CliRun.of("calibrate", "--gpu", "h100", "--measurements", measured.resolve("h100.csv").toString(),
                "--fit-models", "llama-3.1-8b,qwen2.5-1.5b", "--check", measured.resolve("h100-codellama-mixtral-tp2-shard.csv").toString(),
                "--quiet", "--output", dir.resolve("fitted.yaml").toString());
        assertEquals(0, run.exitCode(), run.err());
        String fitted = run.out().lines().findFirst().orElseThrow();
        assertTrue(fitted.contains("fp8_layer_overhead_us") && !fitted.contains("compute_efficiency_max,"),
                "FP8 rows fit the FP8 overhead; the measured GEMM ceiling holds the compute efficiency: " + fitted);
        assertTrue(run.out().contains("\nheld out "), run.out());
        assertTrue(run.out().lines().anyMatch(l -> l.startsWith("mistral-7b bf16 tp1")), run.out());
        assertTrue(run.out().lines().anyMatch(l -> l.startsWith("mixtral-8x7b bf16 tp2 shard")), run.out());
    }

    @Test
    void calibrateRejectsAnUnknownFactor(@TempDir Path dir) {
        CliRun run = CliRun.of("calibrate", "--measurements", Path.of("..", "configs", "measurements", "h100.csv").toString(),
                "--fit-factors", "warp_speed", "--output", dir.resolve("o.yaml").toString());
        assertEquals(2, run.exitCode());
        assertTrue(run.err().startsWith("infersim: --fit-factors: unknown factor 'warp_speed'"), run.err());
        assertEquals(1, run.err().lines().count(), run.err());
    }

    @Test
    void calibrateNamesTheBadLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("steps.csv");
        Files.writeString(file, "phase,batch,context_tokens,new_tokens,measured_ms\nprefill,1,0,512,12.5\ndecode,x,512,1,7\n");
        CliRun run = CliRun.of("calibrate", "--measurements", file.toString(), "--output", dir.resolve("o.yaml").toString());
        assertEquals(2, run.exitCode());
        assertTrue(run.err().startsWith("infersim: --measurements: " + file + ":3: "), run.err());
    }
}
