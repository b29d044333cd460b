package dev.infersim.result;

/**
 * What a benchmark client sees of one request beyond its {@link RequestRecord}: its own send lag, how the response
 * streamed, and what the server said about it. Unknown numbers are -1, unknown strings null.
 *
 * @param sendLagNanos       the send went out this long after the latency origin (the client's own lateness)
 * @param chunks             content chunks received
 * @param serverPromptTokens the prompt length by the server's usage
 * @param serverTtftNanos    the server's own TTFT (ground truth of the infersim mock)
 * @param serverE2elNanos    the server's own E2EL (ground truth of the infersim mock)
 * @param requestId          the response's id
 * @param errorType          the failure's type (http_429, timeout, ...) for a failed request
 * @param generatedText      the streamed text, kept only for a per-request file
 */
public record ClientObservation(long sendLagNanos, int chunks, int serverPromptTokens, long serverTtftNanos,
                                long serverE2elNanos, String requestId, String errorType, String generatedText) {
}
