package dev.infersim.result;

/**
 * What was measured for one request, as a client sees it plus the server-side ground truth when known. All times are
 * nanoseconds on one clock (virtual in the simulator, monotonic in the benchmark client).
 *
 * @param index              the request's position in the workload stream
 * @param requestClass       workload class name (e.g. chat), for per-class breakdowns
 * @param scheduledNanos     when the arrival process scheduled the request
 * @param startNanos         the latency origin: when the request was due to go out, i.e. its scheduled time, or under a
 *                           concurrency cap the moment a slot freed (vLLM starts its clock after the semaphore). A
 *                           client passes this, not the moment its send actually happened, so its own send lag counts
 *                           as latency (no coordinated omission)
 * @param firstTokenNanos    when the first content token arrived; -1 if none did
 * @param lastTokenNanos     when the last token arrived; -1 if none did
 * @param promptTokens       prompt length in tokens
 * @param outputTokens       tokens received
 * @param cachedPromptTokens prompt tokens the server served from its prefix cache; -1 when unknown
 * @param queueNanos         server-side queue time (arrival at the engine to first scheduled); -1 when unknown
 * @param prefillNanos       server-side prefill time (first scheduled to first token); -1 when unknown
 * @param preemptions        times the server preempted the request; -1 when unknown
 * @param finishReason       stop, length or abort as the OpenAI API spells it; null when unknown
 * @param error              why the request failed, or null when it succeeded
 */
public record RequestRecord(long index, String requestClass, long scheduledNanos, long startNanos, long firstTokenNanos,
                            long lastTokenNanos, int promptTokens, int outputTokens, int cachedPromptTokens,
                            long queueNanos, long prefillNanos, int preemptions, String finishReason, String error) {

    public RequestRecord {
        if (startNanos < scheduledNanos) {
            throw new IllegalArgumentException("request " + index + " started at " + startNanos + " ns before its scheduled "
                    + scheduledNanos + " ns");
        }
        if (error == null && (firstTokenNanos < startNanos || lastTokenNanos < firstTokenNanos || outputTokens < 1)) {
            throw new IllegalArgumentException("successful request " + index + " needs start <= first token <= last token "
                    + "and >= 1 output token, got " + startNanos + ", " + firstTokenNanos + ", " + lastTokenNanos + ", "
                    + outputTokens + " tokens");
        }
    }

    public boolean succeeded() {
        return error == null;
    }

    /** Time to first token, from the start. */
    public long ttftNanos() {
        return firstTokenNanos - startNanos;
    }

    /** End-to-end latency, from the start to the last token. */
    public long e2elNanos() {
        return lastTokenNanos - startNanos;
    }

    /** vLLM's TPOT: (E2EL - TTFT) / (output_tokens - 1); 0 for a single-token output. */
    public long tpotNanos() {
        return outputTokens > 1 ? (lastTokenNanos - firstTokenNanos) / (outputTokens - 1) : 0;
    }

    /** Time spent waiting for a concurrency slot (vLLM's client_queue_time): start minus scheduled time. */
    public long clientQueueNanos() {
        return startNanos - scheduledNanos;
    }
}
