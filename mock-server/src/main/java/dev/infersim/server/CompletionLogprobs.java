package dev.infersim.server;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
    private final int initialOffset;
    private final List<String> tokens = new ArrayList<>();
    /** Per position: the likeliest value, NaN when unscored. */
    private double[] likeliest = new double[8];
    /** Per position: alternatives of rank 1.., null when unscored. */
    private final List<String[]> alternatives = new ArrayList<>();

    /** {@code top} is the request's {@code logprobs}; {@code initialOffset} the text already sent before these tokens. */
    CompletionLogprobs(int top, int initialOffset) {
        this.entries = Math.max(1, top);
        this.initialOffset = initialOffset;
    }

    /** A synthetic logprob: the likeliest token's value minus 0.75 per rank, to four decimals. */
    static double value(double likeliest, int rank) {
        return Math.round((likeliest - 0.75 * rank) * 1e4) / 1e4;
    }

    /** A position without a logprob (a prompt's first token). */
    void addUnscored(String token) {
        add(token, Double.NaN, null);
    }

    /** A scored position: {@code token} with {@code likeliest}, then {@code alternative.apply(rank)} for rank 1.. */
    void add(String token, double likeliest, IntFunction<String> alternative) {
        int at = tokens.size();
        if (at == this.likeliest.length) {
            this.likeliest = Arrays.copyOf(this.likeliest, at * 2);
        }
        tokens.add(token);
        this.likeliest[at] = likeliest;
        String[] alts = null;
        if (alternative != null) {
            alts = new String[entries - 1];
            for (int rank = 1; rank < entries; rank++) {
                alts[rank - 1] = alternative.apply(rank);
            }
        }
        alternatives.add(alts);
    }

    void write(JsonGenerator g) throws IOException {
        g.writeStartObject();
        g.writeArrayFieldStart("text_offset");
        int offset = initialOffset;
        for (String t : tokens) {
            g.writeNumber(offset);
            offset += t.codePointCount(0, t.length());
        }
        g.writeEndArray();
        g.writeArrayFieldStart("token_logprobs");
        for (int i = 0; i < tokens.size(); i++) {
            if (Double.isNaN(likeliest[i])) {
                g.writeNull();
            } else {
                g.writeNumber(value(likeliest[i], 0));
            }
        }
        g.writeEndArray();
        g.writeArrayFieldStart("tokens");
        for (String t : tokens) {
            g.writeString(t);
        }
        g.writeEndArray();
        g.writeArrayFieldStart("top_logprobs");
        for (int i = 0; i < tokens.size(); i++) {
            writeTop(g, i);
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** vLLM's top_logprobs entry is a dict: a token appears once, at its best rank. */
    private void writeTop(JsonGenerator g, int i) throws IOException {
        String[] alts = alternatives.get(i);
        if (alts == null) {
            g.writeNull();
            return;
        }
        String token = tokens.get(i);
        g.writeStartObject();
        g.writeNumberField(token, value(likeliest[i], 0));
        for (int rank = 1; rank <= alts.length; rank++) {
            String alt = alts[rank - 1];
            if (!alt.equals(token) && !Arrays.asList(alts).subList(0, rank - 1).contains(alt)) {
                g.writeNumberField(alt, value(likeliest[i], rank));
            }
        }
        g.writeEndObject();
    }
}
