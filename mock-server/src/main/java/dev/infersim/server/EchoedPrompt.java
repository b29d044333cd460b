package dev.infersim.server;

import java.util.Arrays;

/**
 * A completions prompt as {@code echo: true} returns it ahead of the output: its text (the request's string, or the
 * decoded token ids, as vLLM detokenizes a token-id prompt) and, only when logprobs are asked for, each prompt token's
 * own text, since vLLM's logprobs then cover the prompt tokens too.
 *
 * @param text   the prompt text prepended to the choice's text
 * @param ids    the prompt's token ids
 * @param pieces each token's text for logprobs, or null when logprobs are off
 * @param seed   what the prompt's synthetic logprobs derive from: the same prompt scores the same in every choice,
 *               as vLLM scores a prompt once for all its choices
 */
record EchoedPrompt(String text, int[] ids, String[] pieces, long seed) {

    static EchoedPrompt of(PromptTokenizer tokenizer, String text, int[] ids, boolean logprobs) {
        String[] pieces = null;
        if (logprobs) {
            pieces = new String[ids.length];
            for (int i = 0; i < ids.length; i++) {
                pieces[i] = tokenizer.piece(ids[i]);
            }
        }
        return new EchoedPrompt(text, ids, pieces, Arrays.hashCode(ids));
    }
}
