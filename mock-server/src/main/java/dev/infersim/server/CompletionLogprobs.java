package dev.infersim.server;

import java.util.function.IntFunction;

/**
 * The completions API's {@code logprobs} object, {@code {text_offset, token_logprobs, tokens, top_logprobs}}, built as
 * vLLM builds it: each offset is the previous one plus the previous token's length in code points (Python's
 * {@code len}); a scored position lists its own token first and then alternatives, {@code max(1, N)} entries in all
 * (vLLM keeps the sampled token plus the top N, which collapse to N when the sampled token is the likeliest); an
 * unscored position (a prompt's first token, which nothing precedes) has a null logprob and null top_logprobs.
 * Values are synthetic: the listed token is the likeliest and alternatives fall by 0.75 per rank.
 */
final class CompletionLogprobs {
    private final int entries;
    private final StringBuilder offsets = new StringBuilder(32);
    private final StringBuilder values = new StringBuilder(32);
    private final StringBuilder tokens = new StringBuilder(32);
    private final StringBuilder tops = new StringBuilder(64);
    private int offset;
    private int lastLength;
    private boolean any;

    /** {@code top} is the request's {@code logprobs}; {@code initialOffset} the text already sent before these tokens. */
    CompletionLogprobs(int top, int initialOffset) {
        this.entries = Math.max(1, top);
        this.offset = initialOffset;
    }

    /** A synthetic logprob: the likeliest token's value minus 0.75 per rank, to four decimals. */
    static double value(double likeliest, int rank) {
        return Math.round((likeliest - 0.75 * rank) * 1e4) / 1e4;
    }

    /** A position without a logprob (a prompt's first token). */
    void addUnscored(String token) {
        next(token);
        values.append("null");
        tops.append("null");
    }

    /** A scored position: {@code token} with {@code likeliest}, then {@code alternative.apply(rank)} for rank 1.. */
    void add(String token, double likeliest, IntFunction<String> alternative) {
        next(token);
        values.append(value(likeliest, 0));
        tops.append("{\"").append(Json.escape(token)).append("\":").append(value(likeliest, 0));
        for (int rank = 1; rank < entries; rank++) {
            String alt = alternative.apply(rank);
            if (alt.equals(token)) {
                continue; // a dict key appears once; vLLM's top_logprobs is a dict
            }
            tops.append(",\"").append(Json.escape(alt)).append("\":").append(value(likeliest, rank));
        }
        tops.append('}');
    }

    private void next(String token) {
        if (any) {
            offset += lastLength;
            offsets.append(',');
            values.append(',');
            tokens.append(',');
            tops.append(',');
        }
        any = true;
        offsets.append(offset);
        tokens.append('"').append(Json.escape(token)).append('"');
        lastLength = token.codePointCount(0, token.length());
    }

    String json() {
        return "{\"text_offset\":[" + offsets + "],\"token_logprobs\":[" + values + "],\"tokens\":[" + tokens
                + "],\"top_logprobs\":[" + tops + "]}";
    }
}
