package dev.infersim.bench.measure;

import dev.infersim.workload.WorkloadRequest;

/**
 * What one request's exchange with the server came to, handed by the lane that ran it to the run's recorder once it
 * ended: its place in the schedule, when the event loop took it up ({@code startNanos}), sent it and finished writing
 * it (its bytes in the socket), when its text arrived ({@link TokenArrivals}), what the server said
 * ({@link ServerReply}), the error if it failed, and when it ended. Times are nanoseconds on the run's clock, -1 where
 * the instant never came. Immutable, so that the lane may go on with its next request while it is being recorded.
 *
 * @param errorType null when the request succeeded: a 200 stream with at least one token that ended as a stream
 *                  should; {@link #INTERRUPTED} when the run was stopped while it was in flight
 */
public record RequestOutcome(WorkloadRequest request, SendSchedule schedule, long startNanos, long sendNanos,
                             long writtenNanos, TokenArrivals tokens, ServerReply reply, String errorType,
                             String errorMessage, long endedNanos) {
    /** The error type of a request cut off in flight by an interrupt: neither a success nor a server failure. */
    public static final String INTERRUPTED = "interrupted";

    public boolean succeeded() {
        return errorType == null;
    }

    /** Cut off by an interrupt (SIGINT): counted as sent, and neither as a success nor as a failure. */
    public boolean cancelled() {
        return INTERRUPTED.equals(errorType);
    }

    public long originNanos() {
        return schedule.originNanos();
    }

    public long firstTokenNanos() {
        return tokens.firstTokenNanos();
    }

    public long lastTokenNanos() {
        return tokens.lastTokenNanos();
    }

    /** Output tokens: the server's usage.completion_tokens when sent, else what the chunks' counts add up to. */
    public int outputTokens() {
        return reply.usageCompletionTokens() >= 0 ? (int) reply.usageCompletionTokens() : tokens.countedTokens();
    }

    /** The server's ground truth for this request, or null when it sent none. */
    public ServerTruth truth() {
        return reply.truth();
    }

    /**
     * The client's own bound on its TTFT error: the send lag up to the request's bytes being in the socket, plus the
     * lateness of the read that brought the first chunk; -1 when either is unknown.
     */
    public long ttftErrorBoundNanos() {
        if (writtenNanos < 0 || tokens.chunks() == 0 || tokens.chunkLateness(0) < 0) {
            return -1;
        }
        return Math.max(0, writtenNanos - schedule.originNanos()) + tokens.chunkLateness(0);
    }
}
