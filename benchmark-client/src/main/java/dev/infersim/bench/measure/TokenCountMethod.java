package dev.infersim.bench.measure;

import java.util.Locale;

/**
 * Where a request's per-chunk token counts came from, most trusted first. They matter for per-token ITL: a chunk of
 * k tokens after a gap g counts as k gaps of g / k. The client asks every server for
 * {@code stream_options.continuous_usage_stats} (vLLM honours it) and uses the first that applies.
 */
public enum TokenCountMethod {
    /** The server's usage on every chunk: a chunk's tokens are the growth of {@code completion_tokens}. */
    SERVER_USAGE_PER_CHUNK,
    /** The final usage equals the number of chunks: one token per chunk (most servers stream that way). */
    ONE_PER_CHUNK,
    /** The tokenizer's counts of each chunk's text, scaled (cumulatively rounded) to sum to the server's usage. */
    TOKENIZER_SCALED_TO_USAGE,
    /** The tokenizer's counts alone: the server sent no usage, so counts depend on the tokenizer matching it. */
    TOKENIZER;

    /** The name in the result, e.g. {@code one_per_chunk}. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }
}
