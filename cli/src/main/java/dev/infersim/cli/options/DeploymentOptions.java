package dev.infersim.cli.options;

import dev.infersim.engine.CostModel;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineVersion;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.profile.Precision;
import dev.infersim.engine.PrefixCachingHashAlgo;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.engine.SchedulingPolicies;
import picocli.CommandLine.Option;

/** The serving flags of {@code vllm serve}, shared by every command that models a deployment. */
@OptionGroup.In(OptionGroup.DEPLOYMENT)
public final class DeploymentOptions {

    @Option(names = "--gpu", defaultValue = "h100", paramLabel = "NAME|FILE",
            description = "GPU profile: a bundled one or a YAML file (default: ${DEFAULT-VALUE}). Bundled:%n${sys:"
                    + BundledNames.GPUS + "}")
    String gpu;

    @Option(names = "--model", defaultValue = "llama-3.1-8b", paramLabel = "NAME|FILE",
            description = "Model profile: a bundled one or a YAML file (default: ${DEFAULT-VALUE}). Bundled:%n${sys:"
                    + BundledNames.MODELS + "}")
    String model;

    @Option(names = {"--tensor-parallel-size", "-tp"}, defaultValue = "1", description = "GPUs per replica (default: ${DEFAULT-VALUE}).")
    int tensorParallelSize;

    @Option(names = "--gpu-memory-utilization", defaultValue = "0.9",
            description = "Fraction of GPU memory for weights, activations and KV cache (default: ${DEFAULT-VALUE}).")
    double gpuMemoryUtilization;

    @Option(names = "--max-num-seqs", defaultValue = "256", description = "Max sequences per iteration (default: ${DEFAULT-VALUE}).")
    public int maxNumSeqs;

    @Option(names = "--max-num-batched-tokens", defaultValue = "8192",
            description = "Token budget per iteration (default: ${DEFAULT-VALUE}).")
    int maxNumBatchedTokens;

    @Option(names = "--block-size", defaultValue = "16", description = "Tokens per KV-cache block (default: ${DEFAULT-VALUE}).")
    int blockSize;

    @Option(names = "--enable-prefix-caching", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Reuse KV blocks of shared prompt prefixes (default: on, as vLLM V1).")
    boolean enablePrefixCaching;

    @Option(names = "--enable-chunked-prefill", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Split long prompts over iterations (default: on).")
    boolean enableChunkedPrefill;

    @Option(names = "--max-model-len", defaultValue = "0",
            description = "Max prompt + output tokens; 0 = the model's context, capped by KV capacity (default: 0).")
    int maxModelLen;

    @Option(names = "--dtype", defaultValue = "auto",
            description = "Activation (model) dtype, as vLLM: auto, half, float16 or bfloat16, all priced as 16-bit; "
                    + "FP8 weights are --quantization fp8 (default: ${DEFAULT-VALUE}).")
    String dtype;

    @Option(names = "--quantization", paramLabel = "METHOD",
            description = "Weight quantization, as vLLM: fp8 (FP8 weights, 16-bit activations); default: none.")
    String quantization;

    @Option(names = "--kv-cache-dtype", defaultValue = "auto",
            description = "KV-cache dtype, as vLLM: auto (the activation dtype, whatever the weights), bfloat16, fp8, "
                    + "fp8_e4m3 or fp8_e5m2 (default: ${DEFAULT-VALUE}).")
    String kvCacheDtype;

    @Option(names = "--prefix-caching-hash-algo", defaultValue = "sha256", paramLabel = "ALGO",
            description = "How prefix-cache blocks are hashed, as vLLM: sha256 (pickle + SHA-256), sha256_cbor, xxhash "
                    + "(pickle + XXH3-128) or xxhash_cbor; the first block's parent is the hash of $PYTHONHASHSEED when "
                    + "set, else random (default: ${DEFAULT-VALUE}).")
    String prefixCachingHashAlgo;

    @Option(names = "--engine", defaultValue = "vllm-v1", paramLabel = "VERSION",
            description = "vLLM engine version, which sets the host time of each step beside the GPU's: vllm-v1 "
                    + "(scheduling overlapped with the GPU's work) or vllm-v0 (the earlier engine, whose scheduling and "
                    + "input preparation run between the GPU's steps) (default: ${DEFAULT-VALUE}).")
    String engine;

    @Option(names = "--num-scheduler-steps", defaultValue = "1", paramLabel = "N",
            description = "vLLM V0's multi-step scheduling (--engine vllm-v0 only): decodes run in rounds of N steps, "
                    + "scheduled once, new requests taken in between rounds and each round's tokens sent at its end "
                    + "(default: ${DEFAULT-VALUE}).")
    int numSchedulerSteps;

    @Option(names = "--scheduling-policy", defaultValue = "fcfs", description = "fcfs or priority (default: ${DEFAULT-VALUE}).")
    public String schedulingPolicy;

    /** The deployment these flags describe; throws ConfigException naming the bad flag. */
    public Deployment deployment() {
        Precision weights = PrecisionFlags.weights(dtype, quantization);
        Precision kv = PrecisionFlags.kvCache(kvCacheDtype, dtype);
        return Deployment.builder(Profiles.gpu(gpu), Profiles.model(model))
                .tensorParallelSize(tensorParallelSize)
                .gpuMemoryUtilization(gpuMemoryUtilization)
                .maxNumSeqs(maxNumSeqs)
                .maxNumBatchedTokens(maxNumBatchedTokens)
                .blockSize(blockSize)
                .enablePrefixCaching(enablePrefixCaching)
                .enableChunkedPrefill(enableChunkedPrefill)
                .maxModelLen(maxModelLen)
                .dtype(weights)
                .kvCacheDtype(kv)
                .prefixCachingHashAlgo(PrefixCachingHashAlgo.parse("--prefix-caching-hash-algo", prefixCachingHashAlgo))
                .hashSeed(System.getenv("PYTHONHASHSEED"))
                .engine(EngineVersion.parse("--engine", engine))
                .numSchedulerSteps(numSchedulerSteps)
                .build();
    }

    /** An engine for these flags: memory-derived KV capacity, roofline cost, the chosen policy. */
    public EngineCore engine() {
        Deployment d = deployment();
        CostModel cost = new RooflineCostModel(d);
        return new EngineCore(d, KvCapacity.of(d), cost, SchedulingPolicies.byName(schedulingPolicy));
    }

    /** As {@link #engine()}, or timed by fixed latencies drawn from {@code seed} when {@code fixed} is not null. */
    public EngineCore engine(FixedTiming fixed, long seed) {
        return engine(deployment(), fixed, seed);
    }

    /** As above, for {@code d} (these flags' deployment with more settings, such as LoRA's). */
    public EngineCore engine(Deployment d, FixedTiming fixed, long seed) {
        if (fixed == null) {
            return new EngineCore(d, KvCapacity.of(d), new RooflineCostModel(d), SchedulingPolicies.byName(schedulingPolicy));
        }
        return EngineCore.fixed(d, KvCapacity.of(d), SchedulingPolicies.byName(schedulingPolicy), fixed, seed);
    }
}
