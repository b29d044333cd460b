package dev.infersim.engine;

import static dev.infersim.common.ConfigException.check;

/**
 * The link a decode engine pulls a prompt's KV cache over from the prefill engine that computed it, as vLLM's
 * NixlConnector does it: the decode side allocates blocks for the prompt, posts one read of the prefill side's blocks
 * and schedules the request once the read has completed
 * (vllm/distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py, {@code get_num_new_matched_tokens} and
 * {@code update_state_after_alloc}, https://github.com/vllm-project/vllm/blob/9aaf83ef502fc37bc647f6e474314d48ba36cd1c/vllm/distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py).
 *
 * <p>Each GPU of the decode engine's tensor-parallel group reads the KV heads it holds over its own link, so a transfer
 * of {@code n} tokens takes {@code n x kvBytesPerTokenPerGpu / (gbps x 1e9)} seconds on the wire
 * ({@link KvCapacity#kvBytesPerTokenPerGpu}), plus {@code latencyMs} (posting the read and the completion notice). As
 * the LoRA host link is modelled ({@link LoraConfig}), a transfer runs at the link's full rate: one at a time per
 * engine, first come first served, the fixed latency not holding the link.
 *
 * @param gbps      GB/s of one GPU's link. Default {@value #DEFAULT_GBPS}: one 400 Gb/s NIC per GPU (ConnectX-7, as in an
 *                  H100 DGX node's compute fabric); a pull over NVLink inside one node is several times faster
 * @param latencyMs fixed cost of each transfer, ms. Default {@value #DEFAULT_LATENCY_MS}: an assumption, not a
 *                  measurement; set both from your own fabric
 */
public record KvTransferLink(double gbps, double latencyMs) {
    public static final double DEFAULT_GBPS = 50;
    public static final double DEFAULT_LATENCY_MS = 1;
    public static final KvTransferLink DEFAULT = new KvTransferLink(DEFAULT_GBPS, DEFAULT_LATENCY_MS);

    public KvTransferLink {
        check(gbps > 0 && Double.isFinite(gbps), "--kv-transfer-gbps must be a positive number, got %s", gbps);
        check(latencyMs >= 0 && Double.isFinite(latencyMs), "--kv-transfer-latency-ms must be >= 0, got %s", latencyMs);
    }

    /** Nanoseconds {@code tokens} tokens of KV take on the wire, at {@code bytesPerTokenPerGpu} per GPU. */
    public long wireNanos(int tokens, double bytesPerTokenPerGpu) {
        return Math.round(tokens * bytesPerTokenPerGpu / gbps);
    }

    public long latencyNanos() {
        return Math.round(latencyMs * 1e6);
    }

    /** Nanoseconds one transfer of {@code tokens} tokens takes on an idle link: wire time plus the fixed latency. */
    public long transferNanos(int tokens, double bytesPerTokenPerGpu) {
        return wireNanos(tokens, bytesPerTokenPerGpu) + latencyNanos();
    }
}
