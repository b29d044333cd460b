package dev.infersim.server;

/**
 * {@code prompt_logprobs} as vLLM returns them (per choice on completions, once at the top of a chat response): null
 * for the first prompt token (nothing precedes it), then per token an object from token id to
 * {@code {logprob, rank, decoded_token}} holding the prompt token and the top N others, {@code max(1, N)} entries since
 * the synthetic prompt token is the likeliest (rank 1). The values are the ones echo's logprobs give the same prompt.
 */
final class PromptLogprobs {
    private PromptLogprobs() {
    }

    static String json(ReturnedPrompt p, int top, LoremVocabulary words) {
        StringBuilder b = new StringBuilder(64 * p.ids().length).append("[null");
        for (int j = 1; j < p.ids().length; j++) {
            double likeliest = p.likeliest(j);
            b.append(",{");
            entry(b, p.ids()[j], likeliest, 0, p.pieces()[j]);
            for (int rank = 1; rank < Math.max(1, top); rank++) {
                int w = p.alternative(j, rank, words);
                b.append(',');
                entry(b, words.ids[w], likeliest, rank, words.pieces[w]);
            }
            b.append('}');
        }
        return b.append(']').toString();
    }

    private static void entry(StringBuilder b, int id, double likeliest, int rank, String token) {
        b.append('"').append(id).append("\":{\"logprob\":").append(CompletionLogprobs.value(likeliest, rank))
                .append(",\"rank\":").append(rank + 1).append(",\"decoded_token\":\"").append(Json.escape(token)).append("\"}");
    }
}
