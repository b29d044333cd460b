/**
 * The OpenAI wire format and the exchange that writes it: a completion request answered on its event loop ({@link
 * dev.infersim.server.api.openai.CompletionExchange}) in one of the formats of {@link dev.infersim.server.api.openai.Wire},
 * OpenAI's own being SSE chunks ({@link dev.infersim.server.api.openai.SseEncoder}) or one body ({@link
 * dev.infersim.server.api.openai.WholeBody}) with usage and logprobs. The translated APIs build on it.
 */
package dev.infersim.server.api.openai;
