package dev.infersim.engine.profile;

import com.fasterxml.jackson.annotation.JsonProperty;

import static dev.infersim.common.ConfigException.check;

/**
 * A model's vision encoder as its image processor sizes an image, in the names of the model's Hugging Face
 * {@code preprocessor_config.json} and {@code config.json}. {@code processor: qwen2_vl} is Qwen2-VL's
 * ({@code transformers} {@code Qwen2VLImageProcessor}, vLLM's {@code vllm/model_executor/models/qwen2_vl.py}, which
 * sizes images the same way): the image is resized to {@code smart_resize(height, width)} (both sides multiples of
 * {@code patch_size x spatial_merge_size}, the pixel count within {@code [min_pixels, max_pixels]}, the aspect ratio
 * kept), cut into {@code patch_size} square patches, and every {@code spatial_merge_size^2} neighbouring patches become
 * one token the language model reads: {@code (h / 28) x (w / 28)} tokens for 14-pixel patches merged 2 x 2. In the
 * prompt those tokens are {@code image_token_id}, between {@code vision_start_token_id} and {@code vision_end_token_id}
 * (the chat template's {@code <|vision_start|><|image_pad|><|vision_end|>}, the pad repeated per token by vLLM).
 *
 * @param processor          {@code qwen2_vl}, the one processor modelled
 * @param patchSize          pixels per patch side
 * @param spatialMergeSize   patches merged per side into one token
 * @param minPixels          the resized image has at least this many pixels
 * @param maxPixels          and at most this many
 * @param imageTokenId       the token an image's placeholder repeats ({@code <|image_pad|>})
 * @param visionStartTokenId the token before an image
 * @param visionEndTokenId   the token after an image
 */
public record VisionEncoder(
        String processor,
        @JsonProperty("patch_size") int patchSize,
        @JsonProperty("spatial_merge_size") int spatialMergeSize,
        @JsonProperty("min_pixels") long minPixels,
        @JsonProperty("max_pixels") long maxPixels,
        @JsonProperty("image_token_id") int imageTokenId,
        @JsonProperty("vision_start_token_id") int visionStartTokenId,
        @JsonProperty("vision_end_token_id") int visionEndTokenId) {

    /** Qwen2-VL's largest aspect ratio ({@code MAX_RATIO} of its {@code smart_resize}). */
    static final int MAX_RATIO = 200;

    public VisionEncoder {
        check("qwen2_vl".equals(processor), "vision.processor: only qwen2_vl is modelled, got %s", processor);
        check(patchSize > 0 && spatialMergeSize > 0, "vision: patch_size and spatial_merge_size must be > 0");
        check(minPixels > 0 && maxPixels >= minPixels, "vision: need 0 < min_pixels <= max_pixels, got %s and %s",
                minPixels, maxPixels);
    }

    /**
     * The tokens an image of {@code width x height} pixels takes in the prompt: its {@link #imageTokens} plus the
     * start and end tokens around them.
     */
    public int promptTokens(int width, int height) {
        return imageTokens(width, height) + 2;
    }

    /** The image's tokens ({@code <|image_pad|>} count); IllegalArgumentException for a size the processor refuses. */
    public int imageTokens(int width, int height) {
        int factor = patchSize * spatialMergeSize;
        long[] hw = smartResize(height, width, factor);
        return (int) ((hw[0] / factor) * (hw[1] / factor));
    }

    /**
     * Qwen2-VL's {@code smart_resize}: the nearest multiples of {@code factor} (Python's round, half to even), scaled
     * down by the square root of the excess when above max_pixels (floored) or up when below min_pixels (ceiled).
     */
    long[] smartResize(int height, int width, int factor) {
        if (height < factor || width < factor) {
            throw new IllegalArgumentException("height " + height + " or width " + width + " is smaller than the factor "
                    + factor);
        }
        if ((double) Math.max(height, width) / Math.min(height, width) > MAX_RATIO) {
            throw new IllegalArgumentException("absolute aspect ratio must be smaller than " + MAX_RATIO + ", got "
                    + (double) Math.max(height, width) / Math.min(height, width));
        }
        long h = Math.round(Math.rint((double) height / factor)) * factor;
        long w = Math.round(Math.rint((double) width / factor)) * factor;
        if (h * w > maxPixels) {
            double beta = Math.sqrt((double) height * width / maxPixels);
            h = (long) Math.floor(height / beta / factor) * factor;
            w = (long) Math.floor(width / beta / factor) * factor;
        } else if (h * w < minPixels) {
            double beta = Math.sqrt((double) minPixels / ((double) height * width));
            h = (long) Math.ceil(height * beta / factor) * factor;
            w = (long) Math.ceil(width * beta / factor) * factor;
        }
        return new long[] {h, w};
    }

    /** Whether {@code id} is one of the image placeholder tokens (the prompt may hold them though no text makes them). */
    public boolean isPlaceholder(int id) {
        return id == imageTokenId || id == visionStartTokenId || id == visionEndTokenId;
    }
}
