package dev.infersim.server.request;

import dev.infersim.server.text.PromptTokenizer;

import java.util.List;

/**
 * Chat {@code echo}: vLLM repeats the conversation's last message before the reply only when that message has the
 * reply's role, so a client can prefill the start of the assistant's answer and get the whole answer back. The mock
 * always adds the generation prompt, so the reply's role is always the assistant's.
 */
final class ChatEcho {
    private static final String REPLY_ROLE = "assistant";

    private ChatEcho() {
    }

    /** The text to put before each reply, or null when the last message is not the assistant's or is empty. */
    static String text(List<PromptTokenizer.Message> messages) {
        PromptTokenizer.Message last = messages.get(messages.size() - 1);
        return last.role().equals(REPLY_ROLE) && !last.content().isEmpty() ? last.content() : null;
    }
}
