package dev.infersim.bench;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The server's own timeline of one request, from the {@code infersim} object an infersim mock server puts in the final
 * stream chunk: what the client's measurements are checked against with {@code --validate}. Durations are wall-clock
 * nanoseconds on the server, from the moment the server received the request.
 *
 * @param ttftNanos          server receive to first token written; -1 when absent
 * @param e2elNanos          server receive to last token written; -1 when absent
 * @param queueNanos         engine arrival to first scheduled; -1 when absent
 * @param prefillNanos       first scheduled to first token; -1 when absent
 * @param cachedPromptTokens prompt tokens served from the prefix cache; -1 when absent
 * @param preemptions        times the request was preempted; -1 when absent
 */
public record GroundTruth(long ttftNanos, long e2elNanos, long queueNanos, long prefillNanos, int cachedPromptTokens,
                          int preemptions) {

    /** Reads the {@code infersim} object; fields it lacks stay -1. */
    public static GroundTruth from(JsonNode infersim) {
        return new GroundTruth(nanos(infersim, "ttft_ms"), nanos(infersim, "e2el_ms"), nanos(infersim, "queue_ms"),
                nanos(infersim, "prefill_ms"), count(infersim, "cached_prompt_tokens"), count(infersim, "preemptions"));
    }

    private static long nanos(JsonNode node, String msField) {
        JsonNode v = node.get(msField);
        return v != null && v.isNumber() ? Math.round(v.asDouble() * 1e6) : -1;
    }

    private static int count(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v != null && v.isNumber() ? v.asInt() : -1;
    }
}
