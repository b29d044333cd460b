package dev.infersim.engine;

import com.fasterxml.jackson.annotation.JsonProperty;

import static dev.infersim.engine.ConfigException.check;

/**
 * One accelerator: datasheet peaks plus the efficiency factors and fixed overheads that turn the roofline bound into
 * the step times a real serving engine (vLLM V1 with CUDA graphs) measures. See configs/gpus/README.md for where each
 * number comes from and how the factors were calibrated.
 *
 * @param name                        profile name, e.g. {@code h100}
 * @param description                 human-readable part name
 * @param memoryGb                    device memory, GB (10^9 bytes)
 * @param hbmBandwidthTbS             peak memory bandwidth, TB/s
 * @param bf16Tflops                  dense BF16 tensor peak, TFLOP/s
 * @param fp8Tflops                   dense FP8 tensor peak, TFLOP/s (0 when the part has no FP8 tensor cores)
 * @param interconnectGbS             per-GPU all-reduce bandwidth (NVLink, Infinity Fabric or PCIe), GB/s
 * @param gemmBandwidthEfficiency     fraction of HBM bandwidth a weight-streaming GEMM reaches
 * @param attentionBandwidthEfficiency fraction of HBM bandwidth paged decode attention reaches reading the KV cache
 * @param computeEfficiencyMax        fraction of tensor peak a large GEMM reaches
 * @param computeHalfTokens           tokens in a step at which GEMM efficiency reaches half its maximum
 *                                    (small GEMMs cannot fill the machine's tiles)
 * @param attentionComputeEfficiency  fraction of tensor peak prefill attention (FlashAttention) reaches
 * @param interconnectEfficiency      fraction of interconnect bandwidth an all-reduce reaches
 * @param stepOverheadUs              fixed cost of one engine iteration: scheduling, input preparation, sampling launch
 * @param layerOverheadUs             per-layer cost of the small kernels (norms, rotary, activation, residual adds)
 * @param sequenceOverheadUs          per-sequence cost in a step: metadata, sampling, detokenization bookkeeping
 * @param allReduceLatencyUs          fixed latency of one all-reduce
 * @param reservedMemoryGb            memory not available to weights or KV: CUDA context, CUDA graphs, allocator slack
 */
public record GpuProfile(
        String name,
        String description,
        @JsonProperty("memory_gb") double memoryGb,
        @JsonProperty("hbm_bandwidth_tb_s") double hbmBandwidthTbS,
        @JsonProperty("bf16_tflops") double bf16Tflops,
        @JsonProperty("fp8_tflops") double fp8Tflops,
        @JsonProperty("interconnect_gb_s") double interconnectGbS,
        @JsonProperty("gemm_bandwidth_efficiency") double gemmBandwidthEfficiency,
        @JsonProperty("attention_bandwidth_efficiency") double attentionBandwidthEfficiency,
        @JsonProperty("compute_efficiency_max") double computeEfficiencyMax,
        @JsonProperty("compute_half_tokens") double computeHalfTokens,
        @JsonProperty("attention_compute_efficiency") double attentionComputeEfficiency,
        @JsonProperty("interconnect_efficiency") double interconnectEfficiency,
        @JsonProperty("step_overhead_us") double stepOverheadUs,
        @JsonProperty("layer_overhead_us") double layerOverheadUs,
        @JsonProperty("sequence_overhead_us") double sequenceOverheadUs,
        @JsonProperty("all_reduce_latency_us") double allReduceLatencyUs,
        @JsonProperty("reserved_memory_gb") double reservedMemoryGb) {

    public GpuProfile {
        check(name != null && !name.isBlank(), "gpu profile needs a name");
        positive(name, "memory_gb", memoryGb);
        positive(name, "hbm_bandwidth_tb_s", hbmBandwidthTbS);
        positive(name, "bf16_tflops", bf16Tflops);
        check(fp8Tflops >= 0, "gpu %s: fp8_tflops must be >= 0, got %s", name, fp8Tflops);
        positive(name, "interconnect_gb_s", interconnectGbS);
        fraction(name, "gemm_bandwidth_efficiency", gemmBandwidthEfficiency);
        fraction(name, "attention_bandwidth_efficiency", attentionBandwidthEfficiency);
        fraction(name, "compute_efficiency_max", computeEfficiencyMax);
        fraction(name, "attention_compute_efficiency", attentionComputeEfficiency);
        fraction(name, "interconnect_efficiency", interconnectEfficiency);
        check(computeHalfTokens >= 0, "gpu %s: compute_half_tokens must be >= 0, got %s", name, computeHalfTokens);
        nonNegative(name, "step_overhead_us", stepOverheadUs);
        nonNegative(name, "layer_overhead_us", layerOverheadUs);
        nonNegative(name, "sequence_overhead_us", sequenceOverheadUs);
        nonNegative(name, "all_reduce_latency_us", allReduceLatencyUs);
        nonNegative(name, "reserved_memory_gb", reservedMemoryGb);
        check(reservedMemoryGb < memoryGb, "gpu %s: reserved_memory_gb %s must be below memory_gb %s",
                name, reservedMemoryGb, memoryGb);
    }

    /** Peak dense tensor throughput, FLOP/s, for the given weight precision (FP8 falls back to BF16 where unsupported). */
    public double peakFlops(Precision precision) {
        double tflops = precision == Precision.FP8 && fp8Tflops > 0 ? fp8Tflops : bf16Tflops;
        return tflops * 1e12;
    }

    public double memoryBytes() {
        return memoryGb * 1e9;
    }

    public double hbmBytesPerSecond() {
        return hbmBandwidthTbS * 1e12;
    }

    public double interconnectBytesPerSecond() {
        return interconnectGbS * 1e9;
    }

    /** A copy with new efficiency factors and overheads, as fitted by calibration. */
    public GpuProfile withFactors(double[] f) {
        return new GpuProfile(name, description, memoryGb, hbmBandwidthTbS, bf16Tflops, fp8Tflops, interconnectGbS,
                f[0], f[1], f[2], f[3], f[4], interconnectEfficiency, f[5], f[6], f[7], allReduceLatencyUs, reservedMemoryGb);
    }

    /** The factors {@link #withFactors} takes, in its order. */
    public double[] factors() {
        return new double[] {gemmBandwidthEfficiency, attentionBandwidthEfficiency, computeEfficiencyMax, computeHalfTokens,
                attentionComputeEfficiency, stepOverheadUs, layerOverheadUs, sequenceOverheadUs};
    }

    private static void positive(String gpu, String field, double v) {
        check(v > 0 && Double.isFinite(v), "gpu %s: %s must be > 0, got %s", gpu, field, v);
    }

    private static void nonNegative(String gpu, String field, double v) {
        check(v >= 0 && Double.isFinite(v), "gpu %s: %s must be >= 0, got %s", gpu, field, v);
    }

    private static void fraction(String gpu, String field, double v) {
        check(v > 0 && v <= 1, "gpu %s: %s must be in (0, 1], got %s", gpu, field, v);
    }
}
