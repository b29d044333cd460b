package dev.infersim.engine;

import dev.infersim.engine.profile.Precision;
import dev.infersim.engine.profile.GpuProfile;
import dev.infersim.engine.profile.ModelProfile;
import org.junit.jupiter.api.Test;

import static dev.infersim.engine.EngineFixtures.h100Llama8b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RooflineCostModelTest {
    private final Deployment llama8b = h100Llama8b().build();
    private final RooflineCostModel cost = new RooflineCostModel(llama8b);

    private long decode(CostModel model, int batch, int context) {
        BatchShape s = new BatchShape();
        for (int i = 0; i < batch; i++) {
            s.addDecode(context);
        }
        return model.stepNanos(s);
    }

    private long prefill(CostModel model, int tokens) {
        return model.stepNanos(new BatchShape().addPrefill(tokens, 0, true));
    }

    @Test
    void decodeCostGrowsWithBatchAndContext() {
        long previous = 0;
        for (int batch : new int[] {1, 2, 8, 32, 128, 256}) {
            long t = decode(cost, batch, 1024);
            assertTrue(t > previous, "batch " + batch);
            previous = t;
        }
        previous = 0;
        for (int context : new int[] {128, 512, 2048, 8192}) {
            long t = decode(cost, 64, context);
            assertTrue(t > previous, "context " + context);
            previous = t;
        }
    }

    @Test
    void batchOneDecodeIsMemoryBoundOnTheWeights() {
        GpuProfile g = llama8b.gpu();
        ModelProfile m = llama8b.model();
        // every linear weight (embeddings excluded: a lookup reads one row) streamed once at the GEMM bandwidth
        double weightBytes = (m.totalParams() - m.embeddingParams()) * 2.0;
        double streamMs = weightBytes / (g.hbmBytesPerSecond() * g.gemmBandwidthEfficiency()) * 1e3;
        double overheadMs = (g.stepOverheadUs() + m.layers() * g.layerOverheadUs() + g.sequenceOverheadUs()) / 1e3;
        double stepMs = decode(cost, 1, 16) / 1e6;
        assertEquals(streamMs + overheadMs, stepMs, 0.02 * stepMs);
        // doubling the bandwidth nearly halves the weight-streaming part
        Deployment faster = llama8b.toBuilder().gpu(withBandwidth(g, g.hbmBandwidthTbS() * 2)).build();
        double fasterMs = decode(new RooflineCostModel(faster), 1, 16) / 1e6;
        assertEquals(streamMs / 2 + overheadMs, fasterMs, 0.02 * fasterMs);
    }

    @Test
    void longPrefillIsComputeBound() {
        GpuProfile g = llama8b.gpu();
        double t8k = prefill(cost, 8192) / 1e6;
        Deployment faster = llama8b.toBuilder().gpu(withBandwidth(g, g.hbmBandwidthTbS() * 2)).build();
        double fasterMemory = prefill(new RooflineCostModel(faster), 8192) / 1e6;
        assertEquals(t8k, fasterMemory, 0.01 * t8k, "bandwidth does not matter to an 8k prefill");
        // and the time is at least the dense FLOPs over the peak
        double flops = 2.0 * 8192 * (llama8b.model().totalParams() - 2 * llama8b.model().embeddingParams());
        assertTrue(t8k > flops / g.peakFlops(Precision.BF16) * 1e3);
    }

    @Test
    void prefillAttentionGrowsQuadratically() {
        BatchShape shortContext = new BatchShape().addPrefill(512, 0, true);
        BatchShape longContext = new BatchShape().addPrefill(512, 16384, true);
        assertTrue(cost.stepNanos(longContext) > 1.5 * cost.stepNanos(shortContext));
    }

    @Test
    void fp8WeightsHalveTheLinearLayersStreamingTime() {
        Deployment fp8 = llama8b.toBuilder().dtype(Precision.FP8).build();
        GpuProfile g = llama8b.gpu();
        ModelProfile m = llama8b.model();
        double bf16Ms = decode(cost, 1, 16) / 1e6;
        double fp8Ms = decode(new RooflineCostModel(fp8), 1, 16) / 1e6;
        // the layers' weights stream half the bytes; the LM head stays in BF16; casting activations costs per layer
        double layerWeightBytes = m.layers() * (m.attentionParamsPerLayer() + m.mlpParamsPerLayer()) * 1.0;
        double savedMs = layerWeightBytes / (g.hbmBytesPerSecond() * g.gemmBandwidthEfficiency()) * 1e3;
        double castMs = m.layers() * g.fp8LayerOverheadUs() / 1e3;
        assertEquals(bf16Ms - savedMs + castMs, fp8Ms, 0.02 * fp8Ms);
    }

    @Test
    void tensorParallelismSplitsWeightsButAddsAllReduce() {
        Deployment tp2 = llama8b.toBuilder().tensorParallelSize(2).build();
        double one = decode(cost, 1, 16);
        double two = decode(new RooflineCostModel(tp2), 1, 16);
        assertTrue(two < one, "weights per GPU halve");
        assertTrue(two > one / 2, "all-reduces and overheads do not shrink");
    }

    @Test
    void moeDecodeReadsOnlyTouchedExperts() {
        Deployment mixtral = Deployment.builder(Profiles.gpu("h100"), Profiles.model("mixtral-8x7b")).tensorParallelSize(2).build();
        RooflineCostModel moe = new RooflineCostModel(mixtral);
        double b1 = decode(moe, 1, 16);
        double b64 = decode(moe, 64, 16);
        assertTrue(b64 > 1.5 * b1, "a batch of 64 touches all 8 experts, a single token only 2: " + b1 + " vs " + b64);
    }

    @Test
    void mixedStepCostsLessThanItsPartsRunSeparately() {
        BatchShape decodeOnly = new BatchShape();
        BatchShape mixed = new BatchShape();
        for (int i = 0; i < 32; i++) {
            decodeOnly.addDecode(1000);
            mixed.addDecode(1000);
        }
        mixed.addPrefill(256, 0, true);
        long separate = cost.stepNanos(decodeOnly) + prefill(cost, 256);
        assertTrue(cost.stepNanos(mixed) < separate, "weights are read once for the whole mixed iteration");
    }

    private static GpuProfile withBandwidth(GpuProfile g, double tbs) {
        return new GpuProfile(g.name(), g.description(), g.memoryGb(), tbs, g.bf16Tflops(), g.fp8Tflops(), g.interconnectGbS(),
                g.gemmBandwidthEfficiency(), g.computeEfficiencyMax(), g.computeHalfTokens(), g.fp8ComputeEfficiencyMax(),
                g.moeGemmEfficiency(), g.moeBandwidthEfficiency(), g.attentionBandwidthEfficiency(), g.decodeAttentionHalfStreams(),
                g.attentionComputeEfficiency(), g.prefillAttentionHalfKeys(), g.interconnectEfficiency(),
                g.allReduceLatencyUs(), g.smallAllReduceEfficiency(), g.smallAllReduceLatencyUs(), g.allReduceHopLatencyUs(), g.stepOverheadUs(),
                g.layerOverheadUs(), g.fp8LayerOverheadUs(), g.moeLayerOverheadUs(), g.sequenceOverheadUs(),
                g.reservedMemoryGb());
    }
}
