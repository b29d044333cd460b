package dev.infersim.engine;

import java.util.Locale;

/** Numeric format of weights or KV cache entries, named as vLLM's {@code --dtype} and {@code --kv-cache-dtype} values. */
public enum Precision {
    BF16(2), FP8(1);

    private final int bytes;

    Precision(int bytes) {
        this.bytes = bytes;
    }

    public int bytes() {
        return bytes;
    }

    /** Parses a vLLM dtype name: bf16, bfloat16, fp16, float16, half, auto (= bf16), fp8, fp8_e4m3. */
    public static Precision parse(String flag, String value) {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "bf16": case "bfloat16": case "fp16": case "float16": case "half": case "auto":
                return BF16;
            case "fp8": case "fp8_e4m3": case "fp8_e5m2":
                return FP8;
            default:
                throw new ConfigException(flag + ": unknown dtype '" + value + "' (expected bf16, fp16, auto or fp8)");
        }
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
