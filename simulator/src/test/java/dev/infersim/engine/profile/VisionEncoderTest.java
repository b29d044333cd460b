package dev.infersim.engine.profile;

import dev.infersim.engine.Profiles;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Qwen2-VL's image token counts, as its processor's {@code smart_resize} gives them (worked out by hand from the
 * published algorithm and preprocessor_config.json: factor 28, 3,136 to 12,845,056 pixels), including the cases where
 * a naive port goes wrong: Python's round halves to even, the lower bound scales up, the upper one down.
 */
class VisionEncoderTest {
    private static final VisionEncoder QWEN2_VL = Profiles.model("qwen2-vl-7b").vision();

    @Test
    void imagesCountAsQwen2VlsProcessorCountsThem() {
        assertEquals(256, QWEN2_VL.imageTokens(448, 448), "16 x 16 merged patches");
        assertEquals(1369, QWEN2_VL.imageTokens(1024, 1024), "resized to 1036 x 1036");
        assertEquals(2691, QWEN2_VL.imageTokens(1920, 1080), "resized to 1932 x 1092");
        assertEquals(391, QWEN2_VL.imageTokens(640, 480), "resized to 644 x 476");
        assertEquals(8, QWEN2_VL.imageTokens(100, 50), "resized to 112 x 56");
        assertEquals(4, QWEN2_VL.imageTokens(70, 70), "70 / 28 = 2.5 rounds half to even, to 2");
        assertEquals(4, QWEN2_VL.imageTokens(28, 28), "below min_pixels: scaled up to 56 x 56");
        assertEquals(16384, QWEN2_VL.imageTokens(8000, 8000), "above max_pixels: scaled down to 3584 x 3584");
        assertEquals(1369 + 2, QWEN2_VL.promptTokens(1024, 1024), "with the start and end tokens around them");
    }

    @Test
    void sizesTheProcessorRefusesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> QWEN2_VL.imageTokens(100, 20), "a side below 28 pixels");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> QWEN2_VL.imageTokens(6000, 28));
        assertTrue(e.getMessage().contains("aspect ratio"), e.getMessage());
    }

    @Test
    void theProfileDeclaresItsEncoderAndTextModelsNone() {
        assertEquals(151655, QWEN2_VL.imageTokenId());
        assertTrue(QWEN2_VL.isPlaceholder(151652) && QWEN2_VL.isPlaceholder(151653) && !QWEN2_VL.isPlaceholder(100));
        assertNull(Profiles.model("llama-3.1-8b").vision(), "a text model's file needs no vision field");
    }
}
