package dev.infersim.server.api.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.common.SplitMix64;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.request.CompletionRequest;
import dev.infersim.server.request.ReturnedPrompt;
import dev.infersim.server.text.LoremVocabulary;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The logprobs of a choice's output tokens, in the chat shape ({@code {content: [{token, logprob, bytes,
 * top_logprobs}]}}) or the completions shape ({@link CompletionLogprobs}). Synthetic but well-formed: the sampled token
 * is the likeliest and alternatives decrease with rank.
 */
final class Logprobs {
    private final CompletionRequest request;
    private final LoremVocabulary vocabulary;

    Logprobs(CompletionRequest request, LoremVocabulary vocabulary) {
        this.request = request;
        this.vocabulary = vocabulary;
    }

    /** Chat logprobs of output tokens [from, to) of {@code c}. */
    void writeChat(JsonGenerator g, Choice c, int from, int to) throws IOException {
        g.writeStartObject();
        g.writeArrayFieldStart("content");
        for (int i = from; i < to; i++) {
            g.writeStartObject();
            writeToken(g, c.text.piece(i), logprob(c, i, 0));
            g.writeArrayFieldStart("top_logprobs");
            for (int k = 0; k < request.topLogprobs(); k++) {
                g.writeStartObject();
                writeToken(g, k == 0 ? c.text.piece(i) : c.text.alternative(i, k), logprob(c, i, k));
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /**
     * Completions logprobs of output tokens [from, to) of {@code c}, after the echoed prompt's tokens when
     * {@code withPrompt} (vLLM scores the prompt when echo asks for logprobs; its first token has none).
     */
    void writeCompletion(JsonGenerator g, Choice c, boolean withPrompt, int from, int to, int initialOffset) throws IOException {
        ReturnedPrompt p = withPrompt ? promptOf(c) : null;
        int promptTokens = p == null ? 0 : p.ids().length;
        CompletionLogprobs.write(g, new CompletionLogprobs.Positions() {
            @Override
            public int size() {
                return promptTokens + to - from;
            }

            @Override
            public String token(int i) {
                return i < promptTokens ? p.pieces()[i] : c.text.piece(from + i - promptTokens);
            }

            @Override
            public double likeliest(int i) {
                if (i < promptTokens) {
                    return i == 0 ? Double.NaN : p.likeliest(i);
                }
                return -1.5 * SplitMix64.uniformAt(c.request.id(), from + i - promptTokens);
            }

            @Override
            public String alternative(int i, int rank) {
                return i < promptTokens ? vocabulary.pieces[p.alternative(i, rank, vocabulary)]
                        : c.text.alternative(from + i - promptTokens, rank);
            }
        }, request.topLogprobs(), initialOffset);
    }

    /** {@code prompt_logprobs} of {@code prompt}. */
    void writePrompt(JsonGenerator g, ReturnedPrompt prompt) throws IOException {
        PromptLogprobs.write(g, prompt, request.promptLogprobs(), vocabulary);
    }

    ReturnedPrompt promptOf(Choice c) {
        return request.returnedPrompts().get(c.index / request.n());
    }

    private static double logprob(Choice c, int i, int rank) {
        return CompletionLogprobs.value(-1.5 * SplitMix64.uniformAt(c.request.id(), i), rank);
    }

    private static void writeToken(JsonGenerator g, String token, double lp) throws IOException {
        g.writeStringField("token", token);
        g.writeNumberField("logprob", lp);
        g.writeArrayFieldStart("bytes");
        for (byte b : token.getBytes(StandardCharsets.UTF_8)) {
            g.writeNumber(b & 0xff);
        }
        g.writeEndArray();
    }
}
