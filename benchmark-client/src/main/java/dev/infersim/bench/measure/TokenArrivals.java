package dev.infersim.bench.measure;

import dev.infersim.common.ReadLateness;

import java.util.Arrays;

/**
 * When a request's generated text reached the client, chunk by chunk: each chunk's arrival, the tokens it carried
 * (as counted by {@link #countMethod}) and the lateness bound of the read that brought it ({@link ReadLateness}); the
 * gaps between token-bearing chunks and the tokens of the chunk that ended each; and the text itself where it was
 * kept. Immutable: built from copies of the exchange's buffers.
 */
public final class TokenArrivals {
    public static final TokenArrivals NONE = new TokenArrivals(new long[0], new int[0], new long[0], 0, new long[0],
            new int[0], 0, 0, 0, -1, null, null);

    private final long[] chunkNanos;
    private final int[] chunkTokens;
    private final long[] chunkLateness;
    private final long[] gapNanos;
    private final int[] gapTokens;
    private final int countedTokens;
    private final int reorderedChunks;
    private final long lastTokenNanos;
    private final TokenCountMethod countMethod;
    private final String text;

    /**
     * Copies the first {@code chunks} entries of the chunk arrays and the first {@code gaps} of the gap arrays.
     *
     * @param countedTokens   the tokens the chunks' counts add up to (0 when they were never counted)
     * @param reorderedChunks chunks whose running completion_tokens fell below an earlier chunk's
     * @param lastTokenNanos  when the last token-bearing chunk came; -1 when the stream did not end as it should
     * @param countMethod     how the chunks' token counts were found; null when they were not
     * @param text            the streamed text, or null where it was not kept
     */
    public TokenArrivals(long[] chunkNanos, int[] chunkTokens, long[] chunkLateness, int chunks, long[] gapNanos,
                         int[] gapTokens, int gaps, int countedTokens, int reorderedChunks, long lastTokenNanos,
                         TokenCountMethod countMethod, String text) {
        this.chunkNanos = Arrays.copyOf(chunkNanos, chunks);
        this.chunkTokens = Arrays.copyOf(chunkTokens, chunks);
        this.chunkLateness = Arrays.copyOf(chunkLateness, chunks);
        this.gapNanos = Arrays.copyOf(gapNanos, gaps);
        this.gapTokens = Arrays.copyOf(gapTokens, gaps);
        this.countedTokens = countedTokens;
        this.reorderedChunks = reorderedChunks;
        this.lastTokenNanos = lastTokenNanos;
        this.countMethod = countMethod;
        this.text = text;
    }

    /** Chunks that carried generated text. */
    public int chunks() {
        return chunkNanos.length;
    }

    /** When chunk {@code i} was read. */
    public long chunkNanos(int i) {
        return chunkNanos[i];
    }

    /** The tokens chunk {@code i} carried. */
    public int chunkTokens(int i) {
        return chunkTokens[i];
    }

    /** The lateness bound of the read that brought chunk {@code i}, ns; -1 when unknown. */
    public long chunkLateness(int i) {
        return chunkLateness[i];
    }

    /** When the first chunk of text came; -1 when none did. */
    public long firstTokenNanos() {
        return chunkNanos.length == 0 ? -1 : chunkNanos[0];
    }

    public long lastTokenNanos() {
        return lastTokenNanos;
    }

    /** Gaps between token-bearing chunks. */
    public int gaps() {
        return gapNanos.length;
    }

    public long gapNanos(int i) {
        return gapNanos[i];
    }

    /** The tokens of the chunk that ended gap {@code i}. */
    public int gapTokens(int i) {
        return gapTokens[i];
    }

    /** The gaps themselves, for the per-request file's writer, which only reads them. */
    long[] gapArray() {
        return gapNanos;
    }

    public int countedTokens() {
        return countedTokens;
    }

    public int reorderedChunks() {
        return reorderedChunks;
    }

    public TokenCountMethod countMethod() {
        return countMethod;
    }

    /** The streamed text; null where it was not kept. */
    public String text() {
        return text;
    }
}
