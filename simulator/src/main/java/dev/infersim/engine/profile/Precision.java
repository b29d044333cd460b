package dev.infersim.engine.profile;

import dev.infersim.common.ConfigException;

import java.util.Locale;

/**
 * Numeric format of weights or KV-cache entries: 16-bit (bfloat16 or float16, priced alike) or FP8. The CLI reads vLLM's
 * flags into these; {@link #parse} reads the calibration kit's CSV names.
 */
public enum Precision {
    BF16(2), FP8(1);

    private final int bytes;

    Precision(int bytes) {
        this.bytes = bytes;
    }

    public int bytes() {
        return bytes;
    }

    /** Parses a weight precision as the calibration kit's CSV names it: bf16 (also bfloat16, fp16, float16, half) or fp8. */
    public static Precision parse(String flag, String value) {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "bf16": case "bfloat16": case "fp16": case "float16": case "half":
                return BF16;
            case "fp8": case "fp8_e4m3": case "fp8_e5m2":
                return FP8;
            default:
                throw new ConfigException(flag + ": unknown dtype '" + value + "' (expected bf16 or fp8)");
        }
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
