package dev.infersim.engine;

import dev.infersim.engine.profile.Precision;
import dev.infersim.engine.profile.GpuProfile;
import dev.infersim.engine.profile.ModelProfile;
import static dev.infersim.common.ConfigException.check;

/**
 * A model served on a GPU type with vLLM's serving flags. Field names follow {@code vllm serve}; defaults are vLLM's.
 *
 * @param tensorParallelSize     {@code --tensor-parallel-size}: GPUs one replica is split over
 * @param gpuMemoryUtilization   {@code --gpu-memory-utilization}: fraction of device memory vLLM may use
 * @param maxNumSeqs             {@code --max-num-seqs}: sequences in one iteration
 * @param maxNumBatchedTokens    {@code --max-num-batched-tokens}: token budget of one iteration
 * @param blockSize              {@code --block-size}: tokens per KV-cache block
 * @param enablePrefixCaching    {@code --enable-prefix-caching}
 * @param enableChunkedPrefill   {@code --enable-chunked-prefill}
 * @param maxModelLen            {@code --max-model-len}; 0 means the model's own maximum, capped by what the KV cache holds
 * @param dtype                  weight precision: 16-bit ({@code --dtype auto/half/float16/bfloat16}) or FP8
 *                               ({@code --quantization fp8}); activations stay 16-bit either way
 * @param kvCacheDtype           {@code --kv-cache-dtype}: KV-cache precision ({@code auto} is the 16-bit activation
 *                               dtype, as vLLM, not the weights')
 * @param lora                   {@code --enable-lora} and its flags; null when LoRA is off
 * @param prefixCachingHashAlgo  {@code --prefix-caching-hash-algo}: how prefix-cache blocks are hashed
 * @param hashSeed               {@code PYTHONHASHSEED} as vLLM reads it: seeds the first block's parent hash; null for a
 *                               random one (every engine then hashes differently, as vLLM's processes do)
 * @param engine                 {@code --engine}: the vLLM engine version, which decides the host time of each step
 *                               beside the GPU's ({@link EngineVersion}); V1 by default
 * @param numSchedulerSteps      {@code --num-scheduler-steps}: vLLM V0's multi-step scheduling, decode steps run in
 *                               rounds of this many forward passes per scheduling ({@link MultiStepScheduler}); 1, one
 *                               scheduling a step, by default and always on V1 (which removed it)
 */
public record Deployment(
        GpuProfile gpu,
        ModelProfile model,
        int tensorParallelSize,
        double gpuMemoryUtilization,
        int maxNumSeqs,
        int maxNumBatchedTokens,
        int blockSize,
        boolean enablePrefixCaching,
        boolean enableChunkedPrefill,
        int maxModelLen,
        Precision dtype,
        Precision kvCacheDtype,
        LoraConfig lora,
        PrefixCachingHashAlgo prefixCachingHashAlgo,
        String hashSeed,
        EngineVersion engine,
        int numSchedulerSteps) {

    public Deployment {
        check(gpu != null, "deployment needs a gpu");
        check(model != null, "deployment needs a model");
        check(tensorParallelSize >= 1 && Integer.bitCount(tensorParallelSize) == 1 && tensorParallelSize <= 64,
                "--tensor-parallel-size must be a power of two between 1 and 64, got %d", tensorParallelSize);
        check(model.attentionHeads() % tensorParallelSize == 0,
                "--tensor-parallel-size %d does not divide the %d attention heads of %s",
                tensorParallelSize, model.attentionHeads(), model.name());
        check(gpuMemoryUtilization > 0 && gpuMemoryUtilization <= 1,
                "--gpu-memory-utilization must be in (0, 1], got %s", gpuMemoryUtilization);
        check(maxNumSeqs >= 1, "--max-num-seqs must be >= 1, got %d", maxNumSeqs);
        check(maxNumBatchedTokens >= 1, "--max-num-batched-tokens must be >= 1, got %d", maxNumBatchedTokens);
        check(blockSize >= 1 && blockSize <= 256, "--block-size must be between 1 and 256, got %d", blockSize);
        check(maxModelLen >= 0, "--max-model-len must be >= 0 (0 = model maximum), got %d", maxModelLen);
        check(maxModelLen <= model.maxContext(), "--max-model-len %d exceeds the %d-token context of %s",
                maxModelLen, model.maxContext(), model.name());
        check(maxNumBatchedTokens >= maxNumSeqs,
                "--max-num-batched-tokens %d must be >= --max-num-seqs %d (each running sequence needs one token per step)",
                maxNumBatchedTokens, maxNumSeqs);
        check(dtype != null && kvCacheDtype != null, "dtype and kv-cache-dtype are required");
        check(prefixCachingHashAlgo != null, "prefix-caching-hash-algo is required");
        check(engine != null, "engine is required");
        check(numSchedulerSteps >= 1, "--num-scheduler-steps must be >= 1, got %d", numSchedulerSteps);
        check(numSchedulerSteps == 1 || engine == EngineVersion.VLLM_V0, "--num-scheduler-steps %d is multi-step "
                + "scheduling, which only vLLM's earlier engine has (V1 removed it); use --engine vllm-v0 or 1 step",
                numSchedulerSteps);
    }

    /** vLLM's defaults for everything but the GPU and model. */
    public static Builder builder(GpuProfile gpu, ModelProfile model) {
        return new Builder(gpu, model);
    }

    public Builder toBuilder() {
        return new Builder(gpu, model).tensorParallelSize(tensorParallelSize).gpuMemoryUtilization(gpuMemoryUtilization)
                .maxNumSeqs(maxNumSeqs).maxNumBatchedTokens(maxNumBatchedTokens).blockSize(blockSize)
                .enablePrefixCaching(enablePrefixCaching).enableChunkedPrefill(enableChunkedPrefill)
                .maxModelLen(maxModelLen).dtype(dtype).kvCacheDtype(kvCacheDtype).lora(lora)
                .prefixCachingHashAlgo(prefixCachingHashAlgo).hashSeed(hashSeed).engine(engine)
                .numSchedulerSteps(numSchedulerSteps);
    }

    /** Mutable builder with vLLM's defaults. */
    public static final class Builder {
        private GpuProfile gpu;
        private ModelProfile model;
        private int tensorParallelSize = 1;
        private double gpuMemoryUtilization = 0.9;
        private int maxNumSeqs = 256;
        private int maxNumBatchedTokens = 8192;
        private int blockSize = 16;
        private boolean enablePrefixCaching = true;
        private boolean enableChunkedPrefill = true;
        private int maxModelLen;
        private Precision dtype = Precision.BF16;
        private Precision kvCacheDtype;
        private LoraConfig lora;
        private PrefixCachingHashAlgo prefixCachingHashAlgo = PrefixCachingHashAlgo.SHA256;
        private String hashSeed;
        private EngineVersion engine = EngineVersion.VLLM_V1;
        private int numSchedulerSteps = 1;

        private Builder(GpuProfile gpu, ModelProfile model) {
            this.gpu = gpu;
            this.model = model;
        }

        public Builder gpu(GpuProfile v) { gpu = v; return this; }
        public Builder model(ModelProfile v) { model = v; return this; }
        public Builder tensorParallelSize(int v) { tensorParallelSize = v; return this; }
        public Builder gpuMemoryUtilization(double v) { gpuMemoryUtilization = v; return this; }
        public Builder maxNumSeqs(int v) { maxNumSeqs = v; return this; }
        public Builder maxNumBatchedTokens(int v) { maxNumBatchedTokens = v; return this; }
        public Builder blockSize(int v) { blockSize = v; return this; }
        public Builder enablePrefixCaching(boolean v) { enablePrefixCaching = v; return this; }
        public Builder enableChunkedPrefill(boolean v) { enableChunkedPrefill = v; return this; }
        public Builder maxModelLen(int v) { maxModelLen = v; return this; }
        public Builder dtype(Precision v) { dtype = v; return this; }
        /** {@code null} means {@code auto}: the KV cache keeps the 16-bit activation dtype, whatever the weights. */
        public Builder kvCacheDtype(Precision v) { kvCacheDtype = v; return this; }
        /** {@code null} means LoRA is off. */
        public Builder lora(LoraConfig v) { lora = v; return this; }
        public Builder prefixCachingHashAlgo(PrefixCachingHashAlgo v) { prefixCachingHashAlgo = v; return this; }
        /** {@code PYTHONHASHSEED}; {@code null} means a random first parent hash. */
        public Builder hashSeed(String v) { hashSeed = v; return this; }
        public Builder engine(EngineVersion v) { engine = v; return this; }
        public Builder numSchedulerSteps(int v) { numSchedulerSteps = v; return this; }

        public Deployment build() {
            return new Deployment(gpu, model, tensorParallelSize, gpuMemoryUtilization, maxNumSeqs, maxNumBatchedTokens,
                    blockSize, enablePrefixCaching, enableChunkedPrefill, maxModelLen, dtype,
                    kvCacheDtype == null ? Precision.BF16 : kvCacheDtype, lora, prefixCachingHashAlgo, hashSeed, engine,
                    numSchedulerSteps);
        }
    }
}
