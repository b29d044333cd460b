package dev.infersim.engine.calibration;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.profile.GpuProfile;
import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CalibratorTest {
    private static final GpuProfile H100 = Profiles.gpu("h100");

    /** Step times the truth profile predicts for prefill, decode and mixed steps of each deployment. */
    private static List<Calibrator.Measurement> synthetic(GpuProfile truth, List<Deployment> deployments) {
        List<Calibrator.Measurement> shapes = new ArrayList<>();
        for (Deployment d : deployments) {
            for (int len : new int[] {64, 128, 256, 512, 1024, 2048, 4096, 8192}) {
                shapes.add(new Calibrator.Measurement(d, "prefill", 1, 0, len, 1));
            }
            for (int context : new int[] {128, 512, 2048, 8192}) {
                for (int batch : new int[] {1, 4, 16, 64, 256}) {
                    shapes.add(new Calibrator.Measurement(d, "decode", batch, context, batch, 1));
                }
            }
            shapes.add(new Calibrator.Measurement(d, "mixed", 32, 2048, 2048, 1));
        }
        double[] ms = Calibrator.predictedMs(truth, shapes);
        List<Calibrator.Measurement> data = new ArrayList<>();
        for (int i = 0; i < ms.length; i++) {
            Calibrator.Measurement m = shapes.get(i);
            data.add(new Calibrator.Measurement(m.deployment(), m.phase(), m.batch(), m.contextTokens(), m.newTokens(), ms[i]));
        }
        return data;
    }

    private static double factor(GpuProfile g, String name) {
        return g.factors()[GpuProfile.FACTORS.indexOf(name)];
    }

    private static GpuProfile with(GpuProfile g, String name, double value) {
        double[] f = g.factors();
        f[GpuProfile.FACTORS.indexOf(name)] = value;
        return g.withFactors(f);
    }

    @Test
    void recoversKnownFactorsFromTwoModels() {
        // the data come from the bundled profile with a per-sequence cost large enough to show; the fit starts from the
        // bundled profile a fifth to a quarter off on every kernel the data can tell apart
        GpuProfile truth = with(H100, "sequence_overhead_us", 15);
        GpuProfile start = with(with(with(H100, "gemm_bandwidth_efficiency", 0.8 * factor(H100, "gemm_bandwidth_efficiency")),
                "attention_bandwidth_efficiency", 0.75 * factor(H100, "attention_bandwidth_efficiency")),
                "attention_compute_efficiency", 0.75 * factor(H100, "attention_compute_efficiency"));
        List<Deployment> deployments = List.of(
                Deployment.builder(H100, Profiles.model("llama-3.1-8b")).build(),
                Deployment.builder(H100, Profiles.model("qwen2.5-1.5b")).build(),
                Deployment.builder(H100, Profiles.model("llama-3.1-70b")).build());
        List<Calibrator.Measurement> data = synthetic(truth, deployments);

        Calibrator.Result result = Calibrator.fit(start, data, Set.of("compute_efficiency_max"));

        assertTrue(Calibrator.medianAbs(result.errorsBefore()) > 0.05, "the starting profile is off");
        assertTrue(Calibrator.maxAbs(result.errorsAfter()) < 0.01, "the fit reproduces the data: " + Calibrator.maxAbs(result.errorsAfter()));
        assertFalse(result.fittedFactors().contains("compute_efficiency_max"), "held");
        assertFalse(result.fittedFactors().contains("moe_gemm_efficiency"), "no MoE rows, nothing to fit it to");
        assertFalse(result.fittedFactors().contains("interconnect_efficiency"), "no tensor-parallel rows");
        // The per-step and per-layer overheads trade against weight streaming for models of 28 to 80 layers, so only
        // their sum per model is pinned down; the factors with a mark of their own come back individually.
        for (String f : List.of("attention_bandwidth_efficiency", "attention_compute_efficiency", "sequence_overhead_us")) {
            assertEquals(factor(truth, f), factor(result.fitted(), f), 0.05 * factor(truth, f), f);
        }
        // and a model the fit never saw follows from the same factors
        List<Calibrator.Measurement> unseen = synthetic(truth, List.of(Deployment.builder(H100, Profiles.model("qwen2.5-7b")).build()));
        assertTrue(Calibrator.maxAbs(Calibrator.errors(result.fitted(), unseen)) < 0.02, "held-out model");
    }

    @Test
    void fitsAllReduceFactorsToAllReduceRowsAlone() {
        GpuProfile truth = with(with(H100, "interconnect_efficiency", 0.6), "small_all_reduce_latency_us", 9);
        Deployment tp2 = Deployment.builder(H100, Profiles.model("llama-3.1-8b")).tensorParallelSize(2).build();
        List<Calibrator.Measurement> shapes = new ArrayList<>();
        for (int tokens : new int[] {1, 8, 32, 128, 512, 2048, 8192, 16384}) {
            shapes.add(new Calibrator.Measurement(tp2, "allreduce", 1, 0, tokens, 1));
        }
        double[] ms = Calibrator.predictedMs(truth, shapes);
        List<Calibrator.Measurement> data = new ArrayList<>();
        for (int i = 0; i < ms.length; i++) {
            data.add(new Calibrator.Measurement(tp2, "allreduce", 1, 0, shapes.get(i).newTokens(), ms[i]));
        }
        Calibrator.Result result = Calibrator.fit(H100, data, Set.of());
        assertEquals(List.of("interconnect_efficiency", "all_reduce_latency_us", "small_all_reduce_efficiency",
                "small_all_reduce_latency_us"), result.fittedFactors());
        assertTrue(Calibrator.maxAbs(result.errorsAfter()) < 0.01, "max error " + Calibrator.maxAbs(result.errorsAfter()));
    }

    @Test
    void recoversTheHopLatencyFromAllReducesAtTwoFourAndEightGpus() {
        GpuProfile h200 = Profiles.gpu("h200");
        GpuProfile truth = with(with(with(h200, "interconnect_efficiency", 0.62), "small_all_reduce_latency_us", 10.5),
                "all_reduce_hop_latency_us", 3.4);
        List<Calibrator.Measurement> data = new ArrayList<>();
        for (int tp : new int[] {2, 4, 8}) {
            Deployment d = Deployment.builder(h200, Profiles.model("llama-3.1-70b")).tensorParallelSize(tp).build();
            for (int tokens : new int[] {1, 8, 32, 128, 512, 2048, 8192, 16384}) {
                Calibrator.Measurement shape = new Calibrator.Measurement(d, "allreduce", 1, 0, tokens, 1);
                double ms = Calibrator.predictedMs(truth, List.of(shape))[0];
                data.add(new Calibrator.Measurement(d, "allreduce", 1, 0, tokens, ms));
            }
        }
        Calibrator.Result result = Calibrator.fit(h200, data, Set.of());
        assertTrue(result.fittedFactors().contains("all_reduce_hop_latency_us"), result.fittedFactors().toString());
        assertEquals(3.4, factor(result.fitted(), "all_reduce_hop_latency_us"), 0.1);
        assertEquals(0.62, factor(result.fitted(), "interconnect_efficiency"), 0.01);
        assertTrue(Calibrator.maxAbs(result.errorsAfter()) < 0.01, "max error " + Calibrator.maxAbs(result.errorsAfter()));
    }

    @Test
    void rejectsAnUnknownHeldFactor() {
        Deployment d = Deployment.builder(H100, Profiles.model("llama-3.1-8b")).build();
        List<Calibrator.Measurement> data = synthetic(H100, List.of(d));
        ConfigException e = org.junit.jupiter.api.Assertions.assertThrows(ConfigException.class,
                () -> Calibrator.fit(H100, data, Set.of("warp_speed")));
        assertTrue(e.getMessage().contains("warp_speed"), e.getMessage());
    }
}
