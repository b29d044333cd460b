package dev.infersim.server.request;

import dev.infersim.engine.LoraAdapter;
import dev.infersim.server.engine.KvTransferParams;
import dev.infersim.server.output.OutputSpec;
import dev.infersim.server.output.StopStrings;

import java.util.List;

/**
 * A validated {@code /v1/chat/completions} or {@code /v1/completions} request.
 *
 * @param chat             true for chat (ChatML-templated messages), false for text completion
 * @param prompts          token ids of each prompt (chat: one; completions: one per prompt in the list)
 * @param echoIds          token ids echo mode repeats, per prompt (the last user message or the prompt itself)
 * @param echo             completions echo: each choice's text starts with its prompt's
 * @param echoMessage      chat echo: the text each choice's reply starts with (the last message, when the assistant's),
 *                         or null when there is nothing to repeat
 * @param returnedPrompts  each prompt's text and token texts when echo or prompt logprobs need them, else null
 * @param promptLogprobs   prompt_logprobs, or null; completions with echo and logprobs default it to logprobs, chat
 *                         with echo to top_logprobs (as vLLM does)
 * @param maxTokens        max_tokens / max_completion_tokens, or null for "up to max-model-len" (chat only; completions default to 16); 0 only with echo
 * @param minTokens        min_tokens
 * @param ignoreEos        ignore_eos
 * @param stops            the stop strings as one automaton, or null when there are none
 * @param n                choices per prompt
 * @param seed             seed, or null
 * @param logprobs         whether to return logprobs
 * @param topLogprobs      alternatives per token (chat top_logprobs, completions logprobs)
 * @param stream           SSE or one JSON body
 * @param includeUsage     stream_options.include_usage
 * @param continuousUsage  stream_options.continuous_usage_stats
 * @param priority         priority (lower first under --scheduling-policy priority)
 * @param tokenTimes       infersim.token_times: add per-token model times to the ground truth
 * @param lora             the LoRA adapter the request runs on, or null
 * @param output           tools, tool_choice, response_format and include_reasoning ({@link OutputSpec#PLAIN} for
 *                         completions)
 * @param kvTransferParams kv_transfer_params as sent (an object), read by the KV connector ({@link KvTransferParams});
 *                         null when absent
 */
public record CompletionRequest(boolean chat, List<int[]> prompts, List<int[]> echoIds, boolean echo, String echoMessage,
                         List<ReturnedPrompt> returnedPrompts, Integer promptLogprobs,
                         Integer maxTokens, int minTokens,
                         boolean ignoreEos, StopStrings stops, int n, Long seed, boolean logprobs, int topLogprobs,
                         boolean stream, boolean includeUsage, boolean continuousUsage, int priority, boolean tokenTimes,
                         LoraAdapter lora, OutputSpec output, com.fasterxml.jackson.databind.JsonNode kvTransferParams) {

    /** Echo with max_tokens 0: the choice's text is the prompt alone, though the engine still runs one token. */
    public boolean promptOnly() {
        return echo && maxTokens != null && maxTokens == 0;
    }
}
