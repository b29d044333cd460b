/**
 * {@code POST /v1/embeddings} of a pooling model ({@code serve --runner pooling}): one embedding per input, timed by
 * the engine as a prefill. Built on {@code api.openai}'s response context.
 */
package dev.infersim.server.api.embeddings;
