package dev.infersim.server.api.openai;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;

/**
 * The completions API's {@code logprobs} object, {@code {text_offset, token_logprobs, tokens, top_logprobs}}, built as
 * vLLM builds it: each offset is the previous one plus the previous token's length in code points (Python's
 * {@code len}); a scored position lists its own token first and then alternatives, {@code max(1, N)} entries in all
 * (vLLM keeps the sampled token plus the top N, which collapse to N when the sampled token is the likeliest); an
 * unscored position (a prompt's first token, which nothing precedes) has a null logprob and null top_logprobs.
 * Values are synthetic: the listed token is the likeliest and alternatives fall by 0.75 per rank.
 *
 * <p>Every value is a function of its position ({@link Positions}), so the four arrays are written straight from it,
 * one position at a time: a prompt of 100,000 tokens costs the writer no memory beyond one position's alternatives.
 */
final class CompletionLogprobs {
    /** What the object lists, position by position, computed on demand. */
    interface Positions {
        int size();

        String token(int i);

        /** The likeliest value at position {@code i}, or NaN when the position is unscored. */
        double likeliest(int i);

        /** The alternative of rank {@code rank} (1..) at a scored position. */
        String alternative(int i, int rank);
    }

    private CompletionLogprobs() {
    }

    /** A synthetic logprob: the likeliest token's value minus 0.75 per rank, to four decimals. */
    static double value(double likeliest, int rank) {
        return Math.round((likeliest - 0.75 * rank) * 1e4) / 1e4;
    }

    /** {@code top} is the request's {@code logprobs}; {@code initialOffset} the text already sent before these tokens. */
    static void write(JsonGenerator g, Positions p, int top, int initialOffset) throws IOException {
        int n = p.size();
        g.writeStartObject();
        g.writeArrayFieldStart("text_offset");
        int offset = initialOffset;
        for (int i = 0; i < n; i++) {
            g.writeNumber(offset);
            String t = p.token(i);
            offset += t.codePointCount(0, t.length());
        }
        g.writeEndArray();
        g.writeArrayFieldStart("token_logprobs");
        for (int i = 0; i < n; i++) {
            double likeliest = p.likeliest(i);
            if (Double.isNaN(likeliest)) {
                g.writeNull();
            } else {
                g.writeNumber(value(likeliest, 0));
            }
        }
        g.writeEndArray();
        g.writeArrayFieldStart("tokens");
        for (int i = 0; i < n; i++) {
            g.writeString(p.token(i));
        }
        g.writeEndArray();
        g.writeArrayFieldStart("top_logprobs");
        String[] alternatives = new String[Math.max(1, top)];
        for (int i = 0; i < n; i++) {
            writeTop(g, p, i, alternatives);
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** vLLM's top_logprobs entry is a dict: a token appears once, at its best rank. */
    private static void writeTop(JsonGenerator g, Positions p, int i, String[] alternatives) throws IOException {
        double likeliest = p.likeliest(i);
        if (Double.isNaN(likeliest)) {
            g.writeNull();
            return;
        }
        String token = p.token(i);
        alternatives[0] = token;
        g.writeStartObject();
        g.writeNumberField(token, value(likeliest, 0));
        for (int rank = 1; rank < alternatives.length; rank++) {
            String alt = p.alternative(i, rank);
            alternatives[rank] = alt;
            if (!seen(alternatives, rank, alt)) {
                g.writeNumberField(alt, value(likeliest, rank));
            }
        }
        g.writeEndObject();
    }

    private static boolean seen(String[] tokens, int count, String token) {
        for (int k = 0; k < count; k++) {
            if (tokens[k].equals(token)) {
                return true;
            }
        }
        return false;
    }
}
