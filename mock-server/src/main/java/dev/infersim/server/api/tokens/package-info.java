/**
 * Requests answered in token ids, as vLLM's disaggregated serving and gRPC {@code Generate} answer them ({@link
 * dev.infersim.server.api.tokens.TokenExchange}, {@link dev.infersim.server.api.tokens.GenerateAnswer}), and the rendered
 * requests of its render endpoints. Knows no route.
 */
package dev.infersim.server.api.tokens;
