package dev.infersim.cli.options;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.profile.Precision;

import java.util.List;
import java.util.Locale;

/**
 * vLLM's three precision flags, read as vLLM reads them (vllm/engine/arg_utils.py and vllm/config, v0.11): {@code --dtype}
 * is the activation (model) dtype and takes only floating-point types ({@code auto, half, float16, bfloat16, float,
 * float32}); FP8 weights come from {@code --quantization fp8}; {@code --kv-cache-dtype auto} keeps the KV cache in the
 * activation dtype, whatever the weights ({@code fp8, fp8_e4m3, fp8_e5m2} store it in one byte). The cost model prices
 * 16-bit activations, so {@code float}/{@code float32} are refused rather than priced as 16-bit; old spellings
 * ({@code --dtype fp8}, {@code bf16}) are refused with the flag vLLM takes instead.
 */
final class PrecisionFlags {
    static final List<String> DTYPES = List.of("auto", "half", "float16", "bfloat16", "float", "float32");
    static final List<String> KV_CACHE_DTYPES = List.of("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2");

    private PrecisionFlags() {
    }

    /** The weights' precision from {@code --dtype} and {@code --quantization} (null or "none": unquantized). */
    static Precision weights(String dtype, String quantization) {
        activations(dtype);
        String q = quantization == null ? "none" : quantization.toLowerCase(Locale.ROOT);
        switch (q) {
            case "none":
                return Precision.BF16;
            case "fp8":
                return Precision.FP8;
            default:
                throw new ConfigException("--quantization " + quantization + ": not modelled; only fp8 (FP8 weights, "
                        + "16-bit activations) is");
        }
    }

    /** The KV cache's precision: {@code auto} is the activation dtype (16-bit here), not the weights'. */
    static Precision kvCache(String kvCacheDtype, String dtype) {
        String v = kvCacheDtype.toLowerCase(Locale.ROOT);
        switch (v) {
            case "auto":
                return activations(dtype);
            case "bfloat16":
                return Precision.BF16;
            case "fp8": case "fp8_e4m3": case "fp8_e5m2":
                return Precision.FP8;
            case "bf16": case "fp16": case "half": case "float16":
                throw new ConfigException("--kv-cache-dtype " + kvCacheDtype + ": vLLM takes " + KV_CACHE_DTYPES
                        + "; a 16-bit cache is auto (the activation dtype) or bfloat16");
            default:
                throw new ConfigException("--kv-cache-dtype " + kvCacheDtype + ": expected one of " + KV_CACHE_DTYPES);
        }
    }

    private static Precision activations(String dtype) {
        String v = dtype.toLowerCase(Locale.ROOT);
        switch (v) {
            case "auto": case "half": case "float16": case "bfloat16":
                return Precision.BF16;
            case "float": case "float32":
                throw new ConfigException("--dtype " + dtype + ": not modelled; the cost model prices 16-bit activations "
                        + "(auto, half, float16, bfloat16)");
            case "fp8": case "fp8_e4m3": case "fp8_e5m2":
                throw new ConfigException("--dtype " + dtype + ": vLLM's --dtype takes only " + DTYPES
                        + "; FP8 weights are --quantization fp8, an FP8 KV cache is --kv-cache-dtype fp8");
            case "bf16":
                throw new ConfigException("--dtype bf16: vLLM spells it bfloat16 (or auto)");
            case "fp16":
                throw new ConfigException("--dtype fp16: vLLM spells it float16 or half");
            default:
                throw new ConfigException("--dtype " + dtype + ": expected one of " + DTYPES);
        }
    }
}
