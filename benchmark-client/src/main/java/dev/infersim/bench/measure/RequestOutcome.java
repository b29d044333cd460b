package dev.infersim.bench.measure;

import dev.infersim.workload.WorkloadRequest;

/**
 * What one request's exchange with the server came to, as {@link MeasuredWindow#record} reads it once the request
 * has ended: its instants on the client's clock (scheduled, latency origin, taken up, sent, written, first and last
 * token), each chunk's arrival, token count and read lateness, the gaps between token-bearing chunks, the server's
 * usage and ground truth ({@link ServerTruth}), and the error if it failed. Times are nanoseconds on the run's clock,
 * -1 where the instant never came. The run's streamed exchange implements it over its own buffers, which it reuses
 * for the next request: read it only in the call that hands it over, and copy what must outlive that call.
 */
public interface RequestOutcome {
    WorkloadRequest request();

    /** When the schedule meant the request to go out. */
    long scheduledNanos();

    /** Scheduled time since the previous request's, to tell a burst's send lag from the rest. */
    long scheduleGapNanos();

    /** What its latencies count from: the scheduled time, or when a --max-concurrency slot freed after it. */
    long originNanos();

    /** When the event loop took the request up, before waiting for a connection. */
    long startNanos();

    /** When it was sent; -1 when it never was. */
    long sendNanos();

    /** When its last byte had been handed to the socket (its write completed); -1 until then. */
    long writtenNanos();

    /** Which attempt of this request the server that answered counted; -1 when not said. */
    int attempt();

    long firstTokenNanos();

    long lastTokenNanos();

    /** Chunks that carried generated text. */
    int chunks();

    /** When chunk {@code i} (of {@link #chunks}) was read. */
    long chunkNanos(int i);

    /** The tokens chunk {@code i} carried, once counted. */
    int chunkTokens(int i);

    /** The lateness bound of the read that brought chunk {@code i} ({@code ReadLateness}), ns; -1 when unknown. */
    long chunkLateness(int i);

    /** The tokens the chunks' counts add up to. */
    int countedTokens();

    /** Chunks whose running completion_tokens fell below an earlier chunk's: tokens that arrived out of order. */
    int reorderedChunks();

    /** The server's usage.prompt_tokens and its cached part; -1 when not sent. */
    long usagePromptTokens();

    long usageCachedPromptTokens();

    /** How the chunks' token counts were found; null unless the request succeeded. */
    TokenCountMethod tokenCountMethod();

    String finishReason();

    /** The server's {@code x-request-id}, or null. */
    String requestId();

    /** The server's ground truth for this request, or null when it sent none. */
    ServerTruth truth();

    /** Null when the request succeeded. */
    String errorType();

    String errorMessage();

    /** Gaps between token-bearing chunks: the first {@link #gapCount} entries of {@link #gapNanos()} hold them. */
    int gapCount();

    /** The gaps' array (its first {@link #gapCount} entries); not to be written to. */
    long[] gapNanos();

    /** The tokens of the chunk that ended gap {@code i}. */
    int gapTokens(int i);

    /** The streamed text. */
    CharSequence generated();

    /**
     * The client's own bound on its TTFT error: the send lag up to the request's bytes being in the socket, plus the
     * lateness of the read that brought the first chunk; -1 when either is unknown.
     */
    long ttftErrorBoundNanos();

    /** Whether the request succeeded: a 200 stream with at least one token that ended as a stream should. */
    default boolean succeeded() {
        return errorType() == null;
    }

    /** Output tokens: the server's usage.completion_tokens when sent, else what the chunks' counts add up to. */
    int outputTokens();
}
