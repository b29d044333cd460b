package dev.infersim.engine.profile;

import com.fasterxml.jackson.annotation.JsonProperty;

import java.util.List;

import static dev.infersim.common.ConfigException.check;

/**
 * One accelerator: datasheet peaks plus the efficiency factors and fixed overheads that turn the roofline bound into
 * the step times a serving engine measures (every layer of a step as one CUDA graph). See configs/gpus/README.md for
 * where each number comes from and which were measured.
 *
 * @param name                         profile name, e.g. {@code h100}
 * @param description                  human-readable part name
 * @param memoryGb                     device memory, GB (10^9 bytes)
 * @param hbmBandwidthTbS              peak memory bandwidth, TB/s
 * @param bf16Tflops                   dense BF16 tensor peak, TFLOP/s
 * @param fp8Tflops                    dense FP8 tensor peak, TFLOP/s (0 when the part has no FP8 tensor cores)
 * @param interconnectGbS              per-GPU all-reduce bandwidth (NVLink, Infinity Fabric or PCIe), GB/s each way
 * @param gemmBandwidthEfficiency      fraction of HBM bandwidth a weight-streaming GEMM reaches
 * @param computeEfficiencyMax         fraction of the BF16 tensor peak a large GEMM reaches
 * @param computeHalfTokens            tokens in a step at which GEMM efficiency reaches half its maximum
 *                                     (small GEMMs cannot fill the machine's tiles)
 * @param fp8ComputeEfficiencyMax      fraction of the FP8 tensor peak a large FP8 GEMM reaches
 * @param moeGemmEfficiency            share of the dense GEMM compute efficiency that grouped expert GEMMs reach
 * @param moeBandwidthEfficiency       fraction of HBM bandwidth grouped expert GEMMs reach streaming expert weights
 * @param attentionBandwidthEfficiency fraction of HBM bandwidth decode attention reaches reading the KV cache
 * @param decodeAttentionHalfStreams   (sequence, KV head) pairs per GPU at which decode attention reaches half of that
 *                                     (one sequence's few KV heads cannot keep every multiprocessor reading)
 * @param attentionComputeEfficiency   fraction of the BF16 tensor peak long-sequence prefill attention reaches
 * @param prefillAttentionHalfKeys     mean keys per query at which prefill attention reaches half of that
 * @param interconnectEfficiency       fraction of interconnect bandwidth a large all-reduce reaches
 * @param allReduceLatencyUs           fixed latency of a large all-reduce (bandwidth protocol)
 * @param smallAllReduceEfficiency     fraction of interconnect bandwidth a small all-reduce reaches (low-latency protocol)
 * @param smallAllReduceLatencyUs      fixed latency of a small all-reduce; each all-reduce takes the faster protocol
 * @param allReduceHopLatencyUs        latency both protocols add for each GPU of the group beyond two (more ring steps)
 * @param stepOverheadUs               fixed cost of one iteration: embedding, sampling, small launches
 * @param layerOverheadUs              per-layer cost of the small kernels (norms, rotary, activation, residual adds,
 *                                     KV-cache writes) and each kernel's launch and tail, even under CUDA graphs
 * @param fp8LayerOverheadUs           extra per-layer cost with FP8 weights (casting activations to FP8)
 * @param moeLayerOverheadUs           extra per-layer cost of a mixture-of-experts layer (routing, sort, gather, scatter)
 * @param sequenceOverheadUs           per-sequence cost in a step: metadata and sampling
 * @param reservedMemoryGb             memory not available to weights or KV: CUDA context, CUDA graphs, allocator slack
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
        @JsonProperty("compute_efficiency_max") double computeEfficiencyMax,
        @JsonProperty("compute_half_tokens") double computeHalfTokens,
        @JsonProperty("fp8_compute_efficiency_max") double fp8ComputeEfficiencyMax,
        @JsonProperty("moe_gemm_efficiency") double moeGemmEfficiency,
        @JsonProperty("moe_bandwidth_efficiency") double moeBandwidthEfficiency,
        @JsonProperty("attention_bandwidth_efficiency") double attentionBandwidthEfficiency,
        @JsonProperty("decode_attention_half_streams") double decodeAttentionHalfStreams,
        @JsonProperty("attention_compute_efficiency") double attentionComputeEfficiency,
        @JsonProperty("prefill_attention_half_keys") double prefillAttentionHalfKeys,
        @JsonProperty("interconnect_efficiency") double interconnectEfficiency,
        @JsonProperty("all_reduce_latency_us") double allReduceLatencyUs,
        @JsonProperty("small_all_reduce_efficiency") double smallAllReduceEfficiency,
        @JsonProperty("small_all_reduce_latency_us") double smallAllReduceLatencyUs,
        @JsonProperty("all_reduce_hop_latency_us") double allReduceHopLatencyUs,
        @JsonProperty("step_overhead_us") double stepOverheadUs,
        @JsonProperty("layer_overhead_us") double layerOverheadUs,
        @JsonProperty("fp8_layer_overhead_us") double fp8LayerOverheadUs,
        @JsonProperty("moe_layer_overhead_us") double moeLayerOverheadUs,
        @JsonProperty("sequence_overhead_us") double sequenceOverheadUs,
        @JsonProperty("reserved_memory_gb") double reservedMemoryGb) {

    /** The YAML names of the factors {@link #factors()} returns and {@link #withFactors} takes, in that order. */
    public static final List<String> FACTORS = List.of(
            "gemm_bandwidth_efficiency", "compute_efficiency_max", "compute_half_tokens", "fp8_compute_efficiency_max",
            "moe_gemm_efficiency", "moe_bandwidth_efficiency", "attention_bandwidth_efficiency", "decode_attention_half_streams",
            "attention_compute_efficiency", "prefill_attention_half_keys", "interconnect_efficiency",
            "all_reduce_latency_us", "small_all_reduce_efficiency", "small_all_reduce_latency_us",
            "all_reduce_hop_latency_us", "step_overhead_us",
            "layer_overhead_us", "fp8_layer_overhead_us", "moe_layer_overhead_us", "sequence_overhead_us");

    /** Which {@link #FACTORS} are fractions in (0, 1]; the others are non-negative. */
    public static boolean isFraction(String factor) {
        return factor.endsWith("_efficiency") || factor.endsWith("_efficiency_max");
    }

    public GpuProfile {
        check(name != null && !name.isBlank(), "gpu profile needs a name");
        positive(name, "memory_gb", memoryGb);
        positive(name, "hbm_bandwidth_tb_s", hbmBandwidthTbS);
        positive(name, "bf16_tflops", bf16Tflops);
        check(fp8Tflops >= 0, "gpu %s: fp8_tflops must be >= 0, got %s", name, fp8Tflops);
        positive(name, "interconnect_gb_s", interconnectGbS);
        double[] f = {gemmBandwidthEfficiency, computeEfficiencyMax, computeHalfTokens, fp8ComputeEfficiencyMax,
                moeGemmEfficiency, moeBandwidthEfficiency, attentionBandwidthEfficiency, decodeAttentionHalfStreams, attentionComputeEfficiency,
                prefillAttentionHalfKeys, interconnectEfficiency, allReduceLatencyUs, smallAllReduceEfficiency,
                smallAllReduceLatencyUs, allReduceHopLatencyUs, stepOverheadUs, layerOverheadUs, fp8LayerOverheadUs,
                moeLayerOverheadUs, sequenceOverheadUs};
        for (int i = 0; i < f.length; i++) {
            String field = FACTORS.get(i);
            if (isFraction(field)) {
                check(f[i] > 0 && f[i] <= 1, "gpu %s: %s must be in (0, 1], got %s", name, field, f[i]);
            } else {
                check(f[i] >= 0 && Double.isFinite(f[i]), "gpu %s: %s must be >= 0, got %s", name, field, f[i]);
            }
        }
        check(reservedMemoryGb >= 0 && Double.isFinite(reservedMemoryGb), "gpu %s: reserved_memory_gb must be >= 0, got %s",
                name, reservedMemoryGb);
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

    /** A copy with new efficiency factors and overheads, in the order of {@link #FACTORS}. */
    public GpuProfile withFactors(double[] f) {
        check(f.length == FACTORS.size(), "expected %d factors, got %d", FACTORS.size(), f.length);
        return new GpuProfile(name, description, memoryGb, hbmBandwidthTbS, bf16Tflops, fp8Tflops, interconnectGbS,
                f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15],
                f[16], f[17], f[18], f[19], reservedMemoryGb);
    }

    /** The efficiency factors and overheads, in the order of {@link #FACTORS}. */
    public double[] factors() {
        return new double[] {gemmBandwidthEfficiency, computeEfficiencyMax, computeHalfTokens, fp8ComputeEfficiencyMax,
                moeGemmEfficiency, moeBandwidthEfficiency, attentionBandwidthEfficiency, decodeAttentionHalfStreams, attentionComputeEfficiency,
                prefillAttentionHalfKeys, interconnectEfficiency, allReduceLatencyUs, smallAllReduceEfficiency,
                smallAllReduceLatencyUs, allReduceHopLatencyUs, stepOverheadUs, layerOverheadUs, fp8LayerOverheadUs,
                moeLayerOverheadUs, sequenceOverheadUs};
    }

    private static void positive(String gpu, String field, double v) {
        check(v > 0 && Double.isFinite(v), "gpu %s: %s must be > 0, got %s", gpu, field, v);
    }
}
