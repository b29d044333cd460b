package dev.infersim.server.api.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.server.request.ReturnedPrompt;
import dev.infersim.server.text.LoremVocabulary;

import java.io.IOException;

/**
 * {@code prompt_logprobs} as vLLM returns them (per choice on completions, once at the top of a chat response): null
 * for the first prompt token (nothing precedes it), then per token an object from token id to
 * {@code {logprob, rank, decoded_token}} holding the prompt token and the top N others, {@code max(1, N)} entries since
 * the synthetic prompt token is the likeliest (rank 1). The values are the ones echo's logprobs give the same prompt.
 * An id appears once per position (vLLM's is a dict), at its best rank.
 */
final class PromptLogprobs {
    private PromptLogprobs() {
    }

    static void write(JsonGenerator g, ReturnedPrompt p, int top, LoremVocabulary words) throws IOException {
        g.writeStartArray();
        g.writeNull();
        int entries = Math.max(1, top);
        int[] written = new int[entries];
        for (int j = 1; j < p.ids().length; j++) {
            double likeliest = p.likeliest(j);
            g.writeStartObject();
            written[0] = p.ids()[j];
            entry(g, written[0], likeliest, 0, p.pieces()[j]);
            int count = 1;
            for (int rank = 1; rank < entries; rank++) {
                int w = p.alternative(j, rank, words);
                if (!contains(written, count, words.ids[w])) {
                    written[count++] = words.ids[w];
                    entry(g, words.ids[w], likeliest, rank, words.pieces[w]);
                }
            }
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static boolean contains(int[] ids, int count, int id) {
        for (int i = 0; i < count; i++) {
            if (ids[i] == id) {
                return true;
            }
        }
        return false;
    }

    private static void entry(JsonGenerator g, int id, double likeliest, int rank, String token) throws IOException {
        g.writeObjectFieldStart(Integer.toString(id));
        g.writeNumberField("logprob", CompletionLogprobs.value(likeliest, rank));
        g.writeNumberField("rank", rank + 1);
        g.writeStringField("decoded_token", token);
        g.writeEndObject();
    }
}
