package dev.infersim.engine;

import dev.infersim.engine.profile.Precision;
import dev.infersim.engine.profile.ModelProfile;
import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProfilesTest {

    @Test
    void loadsEveryBundledProfile() {
        for (String gpu : Profiles.BUNDLED_GPUS) {
            assertEquals(gpu, Profiles.gpu(gpu).name());
        }
        for (String model : Profiles.BUNDLED_MODELS) {
            assertEquals(model, Profiles.model(model).name());
        }
    }

    @Test
    void derivesPublishedParameterCounts() {
        assertEquals(8.03e9, Profiles.model("llama-3.1-8b").totalParams(), 0.02e9);
        assertEquals(70.6e9, Profiles.model("llama-3.1-70b").totalParams(), 0.2e9);
        assertEquals(405.9e9, Profiles.model("llama-3.1-405b").totalParams(), 1.0e9);
        assertEquals(1.54e9, Profiles.model("qwen2.5-1.5b").totalParams(), 0.03e9);
        assertEquals(7.6e9, Profiles.model("qwen2.5-7b").totalParams(), 0.1e9);
        ModelProfile mixtral = Profiles.model("mixtral-8x7b");
        assertEquals(46.7e9, mixtral.totalParams(), 0.2e9);
        assertEquals(12.9e9, mixtral.activeParams(), 0.2e9);
    }

    @Test
    void unknownNameListsTheBundledOnes() {
        ConfigException e = assertThrows(ConfigException.class, () -> Profiles.gpu("h800"));
        assertTrue(e.getMessage().startsWith("--gpu: unknown name 'h800'"), e.getMessage());
        assertTrue(e.getMessage().contains("h100, h200, a100-80g"), e.getMessage());
    }

    @Test
    void malformedYamlNamesFileLineAndField(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("my-gpu.yaml");
        String h100 = new String(Profiles.class.getClassLoader().getResourceAsStream("configs/gpus/h100.yaml").readAllBytes());
        Files.writeString(file, h100.replace("bf16_tflops: 989", "bf16_tflops: lots"));
        ConfigException e = assertThrows(ConfigException.class, () -> Profiles.gpu(file.toString()));
        assertTrue(e.getMessage().startsWith(file + ":7: field 'bf16_tflops'"), e.getMessage());

        Files.writeString(file, h100.replace("bf16_tflops", "bf16_tflop"));
        e = assertThrows(ConfigException.class, () -> Profiles.gpu(file.toString()));
        assertTrue(e.getMessage().startsWith(file + ":7: unknown field 'bf16_tflop'; expected: name, description"), e.getMessage());

        Files.writeString(file, h100.replaceFirst("gemm_bandwidth_efficiency: [0-9.]+", "gemm_bandwidth_efficiency: 1.5"));
        e = assertThrows(ConfigException.class, () -> Profiles.gpu(file.toString()));
        assertTrue(e.getMessage().contains("gemm_bandwidth_efficiency must be in (0, 1], got 1.5"), e.getMessage());
    }

    @Test
    void missingFileIsNamed() {
        ConfigException e = assertThrows(ConfigException.class, () -> Profiles.model("/nope/model.yaml"));
        assertEquals("--model: file /nope/model.yaml does not exist", e.getMessage());
    }

    @Test
    void deploymentThatDoesNotFitGivesTheNumbers() {
        Deployment d = Deployment.builder(Profiles.gpu("l4"), Profiles.model("llama-3.1-70b")).build();
        ConfigException e = assertThrows(ConfigException.class, () -> KvCapacity.of(d));
        assertTrue(e.getMessage().startsWith("llama-3.1-70b does not fit on l4 x1: weights need 141.1 GB per GPU"), e.getMessage());
    }

    @Test
    void kvCapacityFollowsTheMemoryArithmetic() {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        KvCapacity kv = KvCapacity.of(d);
        assertEquals(131_072, kv.kvBytesPerTokenPerGpu(), 1e-9, "2 x 32 layers x 8 kv heads x 128 x 2 bytes");
        double free = 85e9 * 0.9 - 1.5e9 - kv.weightBytesPerGpu() - kv.activationBytesPerGpu();
        assertEquals((int) (free / (131_072.0 * 16)), kv.numBlocks());
        assertTrue(kv.tokens() > 400_000 && kv.tokens() < 480_000, "vLLM reports about 440k tokens here: " + kv.tokens());
        KvCapacity fp8 = KvCapacity.of(d.toBuilder().kvCacheDtype(Precision.FP8).build());
        assertEquals(2 * kv.numBlocks(), fp8.numBlocks(), 1, "fp8 KV doubles the blocks");
        KvCapacity tp2 = KvCapacity.of(d.toBuilder().tensorParallelSize(2).build());
        assertTrue(tp2.tokens() > 2 * kv.tokens(), "two GPUs hold the weights once and twice the KV memory");
    }

    @Test
    void fp8WeightsWithAutoKvKeepTheSixteenBitCacheAsVllmDoes() {
        Deployment bf16 = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        Deployment fp8Weights = bf16.toBuilder().dtype(Precision.FP8).kvCacheDtype(null).build();
        assertEquals(Precision.BF16, fp8Weights.kvCacheDtype(), "--kv-cache-dtype auto is the activation dtype");
        KvCapacity a = KvCapacity.of(bf16);
        KvCapacity b = KvCapacity.of(fp8Weights);
        assertEquals(a.kvBytesPerTokenPerGpu(), b.kvBytesPerTokenPerGpu(), 1e-9, "the same bytes per cached token");
        double freed = a.weightBytesPerGpu() - b.weightBytesPerGpu();
        assertEquals(a.numBlocks() + freed / (a.kvBytesPerTokenPerGpu() * 16), b.numBlocks(), 1,
                "only the memory the smaller weights free adds blocks");
        KvCapacity fp8Kv = KvCapacity.of(fp8Weights.toBuilder().kvCacheDtype(Precision.FP8).build());
        assertEquals(2 * b.numBlocks(), fp8Kv.numBlocks(), 1, "an FP8 cache is asked for, not implied");
    }

    @Test
    void maxModelLenBeyondKvCapacityIsRejected() {
        Deployment d = Deployment.builder(Profiles.gpu("l4"), Profiles.model("llama-3.1-8b")).maxModelLen(131072).build();
        ConfigException e = assertThrows(ConfigException.class, () -> KvCapacity.of(d));
        assertTrue(e.getMessage().startsWith("--max-model-len 131072 needs 131072 KV-cache tokens"), e.getMessage());
    }

    @Test
    void deploymentFlagsAreValidated() {
        Deployment.Builder b = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b"));
        assertEquals("--tensor-parallel-size must be a power of two between 1 and 64, got 3",
                assertThrows(ConfigException.class, () -> b.tensorParallelSize(3).build()).getMessage());
        b.tensorParallelSize(1);
        assertEquals("--gpu-memory-utilization must be in (0, 1], got 1.2",
                assertThrows(ConfigException.class, () -> b.gpuMemoryUtilization(1.2).build()).getMessage());
    }
}
