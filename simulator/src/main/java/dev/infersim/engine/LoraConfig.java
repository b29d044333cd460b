package dev.infersim.engine;

import dev.infersim.engine.profile.ModelProfile;
import java.util.List;

import static dev.infersim.common.ConfigException.check;

/**
 * LoRA serving, as vLLM's {@code --enable-lora} flags configure it ({@code vllm/config/lora.py}), plus the two
 * transfer rates the cost of loading an adapter comes from.
 *
 * <p><b>Residency.</b> The GPU holds {@code max_loras} adapter slots and host memory a cache of {@code max_cpu_loras}
 * adapters, both least recently used first out (vLLM's {@code LRUCacheWorkerLoRAManager}). An adapter registered with
 * the server ({@code --lora-modules}, {@code /v1/load_lora_adapter}) is read into host memory then, outside any step.
 * Before a step runs, each adapter of its batch is made resident: one missing from host memory (never registered, or
 * evicted since) is read from storage, then one not in a GPU slot is copied over the host link. The step takes that
 * much longer.
 *
 * <p><b>Adapter size.</b> An adapter of rank r adds, to each targeted projection of d_in inputs and d_out outputs,
 * A (r x d_in) and B (d_out x r): {@code r x (d_in + d_out)} weights. infersim targets every linear layer of a decoder
 * layer (q, k, v, o, gate, up, down: {@link ModelProfile#loraParamsPerLayer}), as fine-tuning recipes that target
 * "all-linear" do; an adapter's bytes are layers x those weights x 2 (BF16). Every adapter is taken to have rank
 * {@code max_lora_rank}, the rank vLLM pads its GPU slots to. Llama-3.1-8B at rank 16: 32 x 16 x 81,920 x 2 = 83.9 MB,
 * 1.7 ms over the default host link and 25 ms more from storage.
 *
 * @param maxLoras         {@code --max-loras}: GPU adapter slots, so distinct adapters in one step (vLLM default 1)
 * @param maxLoraRank      {@code --max-lora-rank}: the largest adapter rank, one of vLLM's {@link #RANKS} (default 16)
 * @param maxCpuLoras      {@code --max-cpu-loras}: adapters cached in host memory; at least {@code maxLoras}
 * @param hostLinkGbps     host-to-GPU copy rate, GB/s. Default {@value #DEFAULT_HOST_LINK_GBPS}: pinned copies of 8 MB
 *                         to 1 GB measured 48-55 GB/s on an H100 SXM, PCIe Gen5 x16
 *                         (configs/measurements/h100-host-link.txt; vLLM keeps host-cached adapters in pinned memory);
 *                         PCIe Gen4 hosts (A100, L4, L40S) reach about half
 * @param storageGbps      rate adapters are read from storage into host memory, GB/s; by default the weight-load rate
 *                         of {@link StartupDelay#DEFAULT_LOAD_BANDWIDTH_GBPS}
 */
public record LoraConfig(int maxLoras, int maxLoraRank, int maxCpuLoras, double hostLinkGbps, double storageGbps) {
    /** The ranks vLLM accepts for {@code --max-lora-rank}. */
    public static final List<Integer> RANKS = List.of(1, 8, 16, 32, 64, 128, 256, 320, 512);
    public static final double DEFAULT_HOST_LINK_GBPS = 50;
    private static final double ADAPTER_BYTES_PER_WEIGHT = 2;

    public LoraConfig {
        check(maxLoras >= 1, "--max-loras must be >= 1, got %d", maxLoras);
        check(RANKS.contains(maxLoraRank), "--max-lora-rank must be one of %s, got %d", RANKS, maxLoraRank);
        check(maxCpuLoras >= maxLoras, "--max-cpu-loras (%d) must be >= --max-loras (%d)", maxCpuLoras, maxLoras);
        check(hostLinkGbps > 0 && Double.isFinite(hostLinkGbps), "--lora-host-link-gbps must be a positive number, got %s",
                hostLinkGbps);
        check(storageGbps > 0 && Double.isFinite(storageGbps), "--load-bandwidth-gbps must be a positive number, got %s",
                storageGbps);
    }

    /** The given vLLM flags with the default transfer rates; {@code maxCpuLoras} 0 means vLLM's default, {@code maxLoras}. */
    public static LoraConfig of(int maxLoras, int maxLoraRank, int maxCpuLoras) {
        return new LoraConfig(maxLoras, maxLoraRank, maxCpuLoras == 0 ? maxLoras : maxCpuLoras, DEFAULT_HOST_LINK_GBPS,
                StartupDelay.DEFAULT_LOAD_BANDWIDTH_GBPS);
    }

    public LoraConfig withRates(double hostLinkGbps, double storageGbps) {
        return new LoraConfig(maxLoras, maxLoraRank, maxCpuLoras, hostLinkGbps, storageGbps);
    }

    /** Bytes of one adapter of rank {@code max_lora_rank} on this model. */
    public double adapterBytes(ModelProfile model) {
        return (double) model.layers() * model.loraParamsPerLayer(maxLoraRank) * ADAPTER_BYTES_PER_WEIGHT;
    }

    /** Nanoseconds to copy an adapter from host memory into a GPU slot; each tensor-parallel rank copies its shard. */
    public long hostCopyNanos(ModelProfile model, int tensorParallelSize) {
        return Math.round(adapterBytes(model) / tensorParallelSize / hostLinkGbps);
    }

    /** Nanoseconds to read an adapter from storage into host memory. */
    public long storageReadNanos(ModelProfile model) {
        return Math.round(adapterBytes(model) / storageGbps);
    }
}
