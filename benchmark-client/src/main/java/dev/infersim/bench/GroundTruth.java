package dev.infersim.bench;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The server's own timeline of one request, from the {@code infersim} object an infersim mock server puts in the final
 * stream chunk: what the client's measurements are checked against with {@code --validate}. Durations are wall-clock
 * nanoseconds on the server, from the request's arrival at the server's engine.
 *
 * @param ttftNanos          arrival to first token; -1 when absent
 * @param e2elNanos          arrival to finish (last token); -1 when absent
 * @param queueNanos         engine arrival to first scheduled; -1 when absent
 * @param prefillNanos       first scheduled to first token; -1 when absent
 * @param cachedPromptTokens prompt tokens served from the prefix cache; -1 when absent
 * @param preemptions        times the request was preempted; -1 when absent
 * @param timeScale          how many times faster than the modelled GPU the server runs (model time = wall time x
 *                           this); 1 when absent
 * @param replica            which replica of a fleet served the request; -1 when absent
 * @param arrivalEpochMs     when the request reached the server's engine, Unix epoch ms; NaN when absent
 */
public record GroundTruth(long ttftNanos, long e2elNanos, long queueNanos, long prefillNanos, int cachedPromptTokens,
                          int preemptions, double timeScale, int replica, double arrivalEpochMs) {

    /**
     * Reads the {@code infersim} object of an infersim mock: the first choice's wall-clock timeline
     * ({@code choices[0].wall}: arrival_ms, first_token_ms as epoch ms; queue_time_ms, prefill_time_ms, e2e_ms as
     * durations). Fields it lacks stay -1.
     */
    public static GroundTruth from(JsonNode infersim) {
        JsonNode choice = infersim.path("choices").path(0);
        JsonNode wall = choice.path("wall");
        long ttft = -1;
        if (wall.path("arrival_ms").isNumber() && wall.path("first_token_ms").isNumber()) {
            ttft = Math.round((wall.get("first_token_ms").asDouble() - wall.get("arrival_ms").asDouble()) * 1e6);
        }
        return new GroundTruth(ttft, nanos(wall, "e2e_ms"), nanos(wall, "queue_time_ms"),
                nanos(wall, "prefill_time_ms"), count(choice, "cached_prompt_tokens"), count(choice, "preemptions"),
                infersim.path("time_scale").isNumber() ? infersim.get("time_scale").asDouble() : 1, count(infersim, "replica"),
                wall.path("arrival_ms").isNumber() ? wall.get("arrival_ms").asDouble() : Double.NaN);
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
