package dev.infersim.server.request;

import dev.infersim.common.SplitMix64;
import dev.infersim.server.text.LoremVocabulary;
import dev.infersim.server.text.PromptTokenizer;

import java.util.Arrays;

/**
 * A completions prompt as a response returns it: its text for {@code echo} (the request's string, or the decoded token
 * ids, as vLLM detokenizes a token-id prompt) and, when logprobs cover the prompt, each token's own text. Built only
 * for requests that ask for echo or prompt logprobs.
 *
 * @param text   the prompt text echo prepends to the choice's text
 * @param ids    the prompt's token ids
 * @param pieces each token's text for logprobs, or null when no logprobs cover the prompt
 * @param seed   what the prompt's synthetic logprobs derive from: the same prompt scores the same in every choice
 *               and in both echo logprobs and prompt_logprobs, as vLLM scores a prompt once
 */
public record ReturnedPrompt(String text, int[] ids, String[] pieces, long seed) {

    static ReturnedPrompt of(PromptTokenizer tokenizer, String text, int[] ids, boolean logprobs) {
        String[] pieces = null;
        if (logprobs) {
            pieces = new String[ids.length];
            for (int i = 0; i < ids.length; i++) {
                pieces[i] = tokenizer.piece(ids[i]);
            }
        }
        return new ReturnedPrompt(text, ids, pieces, Arrays.hashCode(ids));
    }

    /** Synthetic logprob of prompt token {@code j} (j >= 1; nothing precedes the first), taken as the likeliest. */
    public double likeliest(int j) {
        return -1.5 * SplitMix64.uniformAt(seed, j);
    }

    /** Index of the lorem word that is the alternative of rank {@code rank} (1..) at token {@code j}; never token j. */
    public int alternative(int j, int rank, LoremVocabulary words) {
        int w = (int) ((SplitMix64.valueAt(seed, (long) j * 31 + rank) >>> 1) % words.ids.length);
        return words.ids[w] == ids[j] ? (w + 1) % words.ids.length : w;
    }
}
