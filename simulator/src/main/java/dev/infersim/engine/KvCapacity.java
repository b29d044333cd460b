package dev.infersim.engine;

import dev.infersim.engine.profile.ModelProfile;
import dev.infersim.common.ConfigException;

import java.util.Locale;

/**
 * How many KV-cache blocks a deployment has, from the memory arithmetic vLLM's profiler does at startup:
 * {@code (memory x gpu_memory_utilization - reserved - weights per GPU - activation peak) / (block_size x KV bytes per
 * token per GPU)}.
 *
 * <p>The activation peak is what one forward pass of {@code max_num_batched_tokens} tokens holds at once: the MLP's
 * gate/up output and the attention's QKV for every token, plus the logits of {@code max_num_seqs} sampled sequences.
 *
 * @param weightBytesPerGpu        weights resident on each GPU (the tensor-parallel shard; embeddings included)
 * @param activationBytesPerGpu    profiled activation peak
 * @param kvBytesPerTokenPerGpu    K and V of one token for all layers on one GPU
 * @param numBlocks                KV-cache blocks per replica (all GPUs of a tensor-parallel group hold the same blocks)
 * @param blockSize                tokens per block
 * @param maxModelLen              the effective {@code --max-model-len}
 */
public record KvCapacity(double weightBytesPerGpu, double activationBytesPerGpu, double kvBytesPerTokenPerGpu,
                         int numBlocks, int blockSize, int maxModelLen) {

    /** Sizes the KV cache of a deployment; fails with the numbers when the weights or one full-length sequence do not fit. */
    public static KvCapacity of(Deployment d) {
        ModelProfile m = d.model();
        int tp = d.tensorParallelSize();
        double weights = (double) m.totalParams() * d.dtype().bytes() / tp;
        double activations = activationBytes(d);
        double usable = d.gpu().memoryBytes() * d.gpuMemoryUtilization() - d.gpu().reservedMemoryGb() * 1e9;
        ConfigException.check(weights + activations < usable,
                "%s does not fit on %s x%d: weights need %.1f GB per GPU plus %.1f GB activations, but only %.1f GB "
                        + "is usable (memory %.0f GB x utilization %.2f - %.1f GB reserved)",
                m.name(), d.gpu().name(), tp, weights / 1e9, activations / 1e9, usable / 1e9,
                d.gpu().memoryGb(), d.gpuMemoryUtilization(), d.gpu().reservedMemoryGb());
        double kvPerToken = kvBytesPerTokenPerGpu(d);
        int blocks = (int) Math.min(Integer.MAX_VALUE, Math.floor((usable - weights - activations) / (kvPerToken * d.blockSize())));
        long tokens = (long) blocks * d.blockSize();
        int maxModelLen = d.maxModelLen() > 0 ? d.maxModelLen() : (int) Math.min(m.maxContext(), tokens);
        ConfigException.check(maxModelLen <= tokens,
                "--max-model-len %d needs %d KV-cache tokens but %s on %s x%d holds only %d; lower --max-model-len "
                        + "or raise --gpu-memory-utilization", maxModelLen, maxModelLen, m.name(), d.gpu().name(), tp, tokens);
        return new KvCapacity(weights, activations, kvPerToken, blocks, d.blockSize(), maxModelLen);
    }

    /** K and V of one token across all layers, on one GPU of the tensor-parallel group (KV heads are split, or replicated when fewer than TP). */
    public static double kvBytesPerTokenPerGpu(Deployment d) {
        ModelProfile m = d.model();
        double kvHeadsPerGpu = Math.max(1.0, (double) m.kvHeads() / d.tensorParallelSize());
        return 2.0 * m.layers() * kvHeadsPerGpu * m.headDim() * d.kvCacheDtype().bytes();
    }

    private static double activationBytes(Deployment d) {
        ModelProfile m = d.model();
        int tp = d.tensorParallelSize();
        double perToken = 2.0 * (2.0 * m.intermediateSize() * Math.max(1, m.numExpertsPerTok()) / tp
                + (m.qDim() + 2 * m.kvDim()) / (double) tp + 2.0 * m.hiddenSize());
        double logits = 4.0 * d.maxNumSeqs() * (double) m.vocabSize() / tp;
        return perToken * d.maxNumBatchedTokens() + logits;
    }

    public long tokens() {
        return (long) numBlocks * blockSize;
    }

    /** How many full-length requests fit at once, as vLLM logs "Maximum concurrency for N tokens per request". */
    public double maxConcurrency() {
        return (double) tokens() / maxModelLen;
    }

    /** vLLM's startup log line. */
    public String describe() {
        return String.format(Locale.ROOT, "GPU KV cache size: %,d tokens (%,d blocks of %d); maximum concurrency for %,d tokens "
                + "per request: %.2fx", tokens(), numBlocks, blockSize, maxModelLen, maxConcurrency());
    }
}
