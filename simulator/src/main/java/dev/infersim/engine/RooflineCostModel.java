package dev.infersim.engine;

import dev.infersim.engine.profile.Precision;
import dev.infersim.engine.profile.GpuProfile;
import dev.infersim.engine.profile.ModelProfile;

/**
 * Roofline cost of one iteration, from first principles. Each kernel of a layer costs
 * {@code max(FLOPs / (peak x compute efficiency), bytes / (bandwidth x bandwidth efficiency))} (Williams, Waterman and
 * Patterson, "Roofline", CACM 2009); kernels run one after another so their times add:
 * <ul>
 *   <li>linear layers (QKV, output, gate/up, down): weights are read once per step, whatever the batch; FLOPs are
 *       {@code 2 x tokens x params}; GEMM efficiency grows with tokens as {@code max x T / (T + half)} because small GEMMs
 *       cannot fill the machine;</li>
 *   <li>MoE layers run one grouped GEMM over the tokens' {@code k} expert slots, at their own compute and bandwidth
 *       efficiencies, and read only the experts the batch touches: {@code E x (1 - (1 - k/E)^T)} expected distinct
 *       experts;</li>
 *   <li>decode attention reads every sequence's whole KV cache, at a bandwidth efficiency that grows with the
 *       (sequence, KV head) pairs working in parallel; prefill attention costs {@code 4 x heads x head_dim} FLOPs per
 *       causal query-key pair at an efficiency that grows with the keys each query sees;</li>
 *   <li>the LM head (BF16 whatever the weights) runs only for sequences that sample;</li>
 *   <li>LoRA (when the deployment enables it) adds, per targeted projection and per token on an adapter,
 *       {@code 2 x rank x (d_in + d_out)} FLOPs (the shrink x A and the expand (x A) B), and moves each distinct
 *       adapter's weights plus every LoRA token's projection inputs and outputs through HBM (the kernels run apart
 *       from the base GEMMs): a GEMM roofline like the others, at rank {@code max_lora_rank}, the rank vLLM pads its
 *       slots to ({@link LoraConfig});</li>
 *   <li>tensor parallelism splits weights and heads over the group and adds two all-reduces of the activations per
 *       layer (ring: {@code 2 (tp-1)/tp x bytes / bandwidth} plus latency, the faster of a low-latency and a bandwidth
 *       protocol, as NCCL picks; each GPU beyond two adds a hop of latency to both);</li>
 *   <li>fixed overheads per step, per layer and per sequence cover what the roofline cannot see: small kernels and
 *       each kernel's launch and tail.</li>
 * </ul>
 * Constants are precomputed so {@link #stepNanos} is a few dozen floating-point operations and allocates nothing.
 */
public final class RooflineCostModel implements CostModel {
    private static final double ACTIVATION_BYTES = 2.0; // activations stay in bf16 even with fp8 weights

    private final int layers;
    private final int tp;
    private final double weightBytes;
    private final double peakFlops;
    private final double bf16Flops;
    private final double gemmBandwidth;
    private final double computeEfficiencyMax;
    private final double bf16EfficiencyMax;
    private final double computeHalfTokens;
    private final double moeGemmEfficiency;
    private final double moeBandwidth;
    private final double attentionBandwidth;
    private final double decodeHalfStreams;
    private final double attentionFlops;
    private final double prefillHalfKeys;
    private final double interconnect;
    private final double allReduceLatency;
    private final double smallInterconnect;
    private final double smallAllReduceLatency;
    private final double fixedNanos;
    private final double sequenceNanos;
    // per layer, per GPU
    private final double qkvParams;
    private final double qkvOut;
    private final double outParams;
    private final double mlpParamsPerExpert;
    private final int experts;
    private final int expertsPerToken;
    private final int hidden;
    private final int intermediate;
    private final double kvHeads;
    private final double kvBytesPerTokenPerLayer;
    private final double qHeadsTimesDim;
    private final double lmHeadParams;
    // LoRA per layer, per GPU: weights of one adapter, inputs and outputs of the projections it targets
    private final double loraParams;
    private final double loraIn;
    private final double loraOut;

    public RooflineCostModel(Deployment d) {
        GpuProfile g = d.gpu();
        ModelProfile m = d.model();
        boolean fp8 = d.dtype() == Precision.FP8 && g.fp8Tflops() > 0;
        layers = m.layers();
        tp = d.tensorParallelSize();
        weightBytes = d.dtype().bytes();
        peakFlops = g.peakFlops(d.dtype());
        bf16Flops = g.peakFlops(Precision.BF16);
        gemmBandwidth = g.hbmBytesPerSecond() * g.gemmBandwidthEfficiency();
        computeEfficiencyMax = fp8 ? g.fp8ComputeEfficiencyMax() : g.computeEfficiencyMax();
        bf16EfficiencyMax = g.computeEfficiencyMax();
        computeHalfTokens = g.computeHalfTokens();
        moeGemmEfficiency = g.moeGemmEfficiency();
        moeBandwidth = g.hbmBytesPerSecond() * g.moeBandwidthEfficiency();
        attentionBandwidth = g.hbmBytesPerSecond() * g.attentionBandwidthEfficiency();
        decodeHalfStreams = g.decodeAttentionHalfStreams();
        attentionFlops = bf16Flops * g.attentionComputeEfficiency();
        prefillHalfKeys = g.prefillAttentionHalfKeys();
        interconnect = g.interconnectBytesPerSecond() * g.interconnectEfficiency();
        double hops = Math.max(0, tp - 2) * g.allReduceHopLatencyUs() * 1e-6;
        allReduceLatency = g.allReduceLatencyUs() * 1e-6 + hops;
        smallInterconnect = g.interconnectBytesPerSecond() * g.smallAllReduceEfficiency();
        smallAllReduceLatency = g.smallAllReduceLatencyUs() * 1e-6 + hops;
        double perLayerUs = g.layerOverheadUs() + (fp8 ? g.fp8LayerOverheadUs() : 0) + (m.isMoe() ? g.moeLayerOverheadUs() : 0);
        fixedNanos = (g.stepOverheadUs() + layers * perLayerUs) * 1e3;
        sequenceNanos = g.sequenceOverheadUs() * 1e3;
        qkvParams = (double) m.hiddenSize() * (m.qDim() + 2 * m.kvDim()) / tp;
        qkvOut = (double) (m.qDim() + 2 * m.kvDim()) / tp;
        outParams = (double) m.qDim() * m.hiddenSize() / tp;
        mlpParamsPerExpert = (double) m.mlpParamsPerExpert() / tp;
        experts = m.numExperts();
        expertsPerToken = m.numExpertsPerTok();
        hidden = m.hiddenSize();
        intermediate = m.intermediateSize();
        kvHeads = Math.max(1.0, (double) m.kvHeads() / tp);
        kvBytesPerTokenPerLayer = KvCapacity.kvBytesPerTokenPerGpu(d) / m.layers();
        qHeadsTimesDim = (double) m.qDim() / tp;
        lmHeadParams = (double) m.vocabSize() * m.hiddenSize() / tp;
        int loraRank = d.lora() == null ? 0 : d.lora().maxLoraRank();
        loraParams = (double) m.loraParamsPerLayer(loraRank) / tp;
        loraIn = (double) m.loraInputsPerLayer();
        loraOut = (double) m.loraOutputsPerLayer() / tp;
    }

    @Override
    public long stepNanos(BatchShape s) {
        if (s.isEmpty()) {
            return 0;
        }
        double tokens = s.tokens();
        double layerSeconds = gemm(tokens, qkvParams, hidden, qkvOut)
                + gemm(tokens, outParams, qHeadsTimesDim, hidden)
                + mlp(tokens)
                + decodeAttention(s)
                + prefillAttention(s)
                + lora(s)
                + 2 * allReduceSeconds(tokens);
        double seconds = layers * layerSeconds + lmHead(s.samplingSeqs());
        return Math.round(seconds * 1e9 + fixedNanos + sequenceNanos * s.sequences());
    }

    /** Time of a step's all-reduces: two per layer over the step's tokens (0 without tensor parallelism). */
    public double collectiveSeconds(BatchShape s) {
        return layers * 2 * allReduceSeconds(s.tokens());
    }

    /** Time of one all-reduce of {@code tokens} activations over the tensor-parallel group (0 without one). */
    public double allReduceSeconds(double tokens) {
        if (tp == 1) {
            return 0;
        }
        double ringBytes = 2.0 * (tp - 1) / tp * tokens * hidden * ACTIVATION_BYTES;
        return Math.min(smallAllReduceLatency + ringBytes / smallInterconnect, allReduceLatency + ringBytes / interconnect);
    }

    /** Time of a GEMM over {@code tokens} rows with {@code params} weights, {@code in} inputs and {@code out} outputs per row. */
    private double gemm(double tokens, double params, double in, double out) {
        if (tokens == 0) {
            return 0;
        }
        double flops = 2 * tokens * params;
        double bytes = params * weightBytes + tokens * (in + out) * ACTIVATION_BYTES;
        double efficiency = computeEfficiencyMax * tokens / (tokens + computeHalfTokens);
        return Math.max(flops / (peakFlops * efficiency), bytes / gemmBandwidth);
    }

    /** The LoRA shrink and expand kernels of one layer: the batch's adapters' weights, its LoRA tokens' FLOPs. */
    private double lora(BatchShape s) {
        double tokens = s.loraTokens();
        if (tokens == 0 || loraParams == 0) {
            return 0;
        }
        double flops = 2 * tokens * loraParams;
        double bytes = s.loraAdapters() * loraParams * ACTIVATION_BYTES + tokens * (loraIn + loraOut) * ACTIVATION_BYTES;
        double efficiency = bf16EfficiencyMax * tokens / (tokens + computeHalfTokens);
        return Math.max(flops / (bf16Flops * efficiency), bytes / gemmBandwidth);
    }

    private double lmHead(double sequences) {
        if (sequences == 0) {
            return 0;
        }
        double flops = 2 * sequences * lmHeadParams;
        double bytes = lmHeadParams * ACTIVATION_BYTES + sequences * (hidden + lmHeadParams / hidden) * ACTIVATION_BYTES;
        double efficiency = bf16EfficiencyMax * sequences / (sequences + computeHalfTokens);
        return Math.max(flops / (bf16Flops * efficiency), bytes / gemmBandwidth);
    }

    private double mlp(double tokens) {
        if (experts == 0) {
            return gemm(tokens, mlpParamsPerExpert * 2 / 3, hidden, 2.0 * intermediate / tp)
                    + gemm(tokens, mlpParamsPerExpert / 3, (double) intermediate / tp, hidden);
        }
        double touched = experts * (1 - Math.pow(1 - (double) expertsPerToken / experts, tokens));
        double rows = tokens * expertsPerToken;
        double flops = 2 * rows * mlpParamsPerExpert;
        double bytes = touched * mlpParamsPerExpert * weightBytes + rows * (2 * hidden + 3.0 * intermediate / tp) * ACTIVATION_BYTES;
        double efficiency = moeGemmEfficiency * computeEfficiencyMax * rows / (rows + computeHalfTokens);
        return Math.max(flops / (peakFlops * efficiency), bytes / moeBandwidth);
    }

    private double decodeAttention(BatchShape s) {
        if (s.decodeSeqs() == 0) {
            return 0;
        }
        double keys = s.decodeContextTokens();
        double flops = 4 * qHeadsTimesDim * keys;
        double bytes = keys * kvBytesPerTokenPerLayer;
        double streams = s.decodeSeqs() * kvHeads;
        return Math.max(flops / attentionFlops, bytes * (streams + decodeHalfStreams) / (streams * attentionBandwidth));
    }

    private double prefillAttention(BatchShape s) {
        if (s.prefillChunks() == 0) {
            return 0;
        }
        double pairs = s.prefillAttentionPairs();
        double keysPerQuery = pairs / s.prefillTokens();
        double flops = 4 * qHeadsTimesDim * pairs;
        double bytes = s.prefillContextTokens() * kvBytesPerTokenPerLayer + s.prefillTokens() * qHeadsTimesDim * 2 * ACTIVATION_BYTES;
        return Math.max(flops * (keysPerQuery + prefillHalfKeys) / (keysPerQuery * attentionFlops), bytes / attentionBandwidth);
    }
}
