package dev.infersim.bench.measure;

/**
 * What the server said about one request beside its tokens: which attempt of it was answered
 * ({@code x-infersim-attempt}; -1 when not said), its {@code usage} (-1 where not sent), the finish reason, its
 * {@code x-request-id} (or null) and its ground truth (or null).
 */
public record ServerReply(int attempt, long usagePromptTokens, long usageCachedPromptTokens,
                          long usageCompletionTokens, String finishReason, String requestId, ServerTruth truth) {
    /** A request the server never answered. */
    public static final ServerReply NONE = new ServerReply(-1, -1, -1, -1, null, null, null);
}
