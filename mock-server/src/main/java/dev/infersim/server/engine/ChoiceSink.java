package dev.infersim.server.engine;

import dev.infersim.server.api.openai.CompletionExchange;
import dev.infersim.server.api.tokens.TokenExchange;

/**
 * What answers a request's choices on its event loop: the engine thread publishes their tokens and finishes and the
 * choices' {@link EventLoopBatch} hands each to its sink. A {@link CompletionExchange} writes OpenAI chunks or bodies, a
 * {@link TokenExchange} token ids (vLLM's gRPC Generate, {@code /inference/v1/generate}).
 */
public interface ChoiceSink {
    /** Event loop: the engine published tokens or a finish for {@code c}. Idempotent: a choice may come twice. */
    void deliver(Choice c);

    /** Whether each token must reach the event loop, not only the finish (the engine thread asks, per token). */
    boolean wantsTokens();

    /** Whether the answer streams (it decides how a tool call's finish is named). */
    boolean streams();

    /** The request's choices, prompts x n. */
    int choiceCount();

    /** The request's id ({@code x-request-id}, a gRPC request_id, or one the server made). */
    String requestId();

    /** Engine thread: {@code tokens} were produced; an injected engine fault may throw here (the OpenAI routes'). */
    default void engineFault(int tokens) {
    }
}
