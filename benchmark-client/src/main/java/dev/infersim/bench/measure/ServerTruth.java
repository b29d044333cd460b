package dev.infersim.bench.measure;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The server's own timeline of one request, from the {@code infersim} object an infersim mock server puts in the final
 * stream chunk: what the client's measurements are checked against with {@code --validate}. Durations are wall-clock
 * nanoseconds on the server, from the request's arrival at the server's engine. Where the server also says what
 * reached the wire (mock-server README, "Truth at the wire"), the client's latencies are checked against the wire
 * times ({@link #clientTtftNanos()}, {@link #clientE2elNanos()}): from the instant the server read the request's head
 * to the instants it handed the first and the last token's chunks to the connection. The server's own reading,
 * parsing, tokenizing and hand-off are then the server's, and the client is charged only what lies between the wire
 * and itself.
 *
 * @param ttftNanos          arrival to first token, as the engine planned it; -1 when absent
 * @param e2elNanos          arrival to finish (last token), as planned; -1 when absent
 * @param queueNanos         engine arrival to first scheduled; -1 when absent
 * @param prefillNanos       first scheduled to first token; -1 when absent
 * @param cachedPromptTokens prompt tokens served from the prefix cache; -1 when absent
 * @param preemptions        times the request was preempted; -1 when absent
 * @param timeScale          how many times faster than the modelled GPU the server runs (model time = wall time x
 *                           this); 1 when absent
 * @param replica            which replica of a fleet served the request; -1 when absent
 * @param arrivalEpochMs     when the request reached the server's engine, Unix epoch ms; NaN when absent
 * @param wireTtftNanos      the request's head read to the first token's chunk handed to the connection; -1 when absent
 * @param wireE2elNanos      the request's head read to the last token's chunk handed to the connection; -1 when absent
 * @param receivedEpochMs    when the server read the request's head, Unix epoch ms; NaN when absent
 * @param receivedLatenessNanos how long at most the head had waited in the server's socket before that (its event
 *                           loop's own bound); -1 when absent
 * @param attempt            which attempt of the client's request this answer was, as the server counted; -1 when absent
 * @param tokenWrittenMs     when each token's chunk was handed to the connection, Unix epoch ms; null when absent (the
 *                           request did not ask for {@code infersim.token_times})
 */
public record ServerTruth(long ttftNanos, long e2elNanos, long queueNanos, long prefillNanos, int cachedPromptTokens,
                          int preemptions, double timeScale, int replica, double arrivalEpochMs, long wireTtftNanos,
                          long wireE2elNanos, double receivedEpochMs, long receivedLatenessNanos, int attempt,
                          double[] tokenWrittenMs) {

    /** A planned timeline without the wire, as servers before the wire truth give it. */
    public ServerTruth(long ttftNanos, long e2elNanos, long queueNanos, long prefillNanos, int cachedPromptTokens,
                       int preemptions, double timeScale, int replica, double arrivalEpochMs) {
        this(ttftNanos, e2elNanos, queueNanos, prefillNanos, cachedPromptTokens, preemptions, timeScale, replica,
                arrivalEpochMs, -1, -1, Double.NaN, -1, -1, null);
    }

    /**
     * Reads the {@code infersim} object of an infersim mock: the first choice's wall-clock timeline
     * ({@code choices[0].wall}: arrival_ms, first_token_ms, received_ms, first/last_token_written_ms as epoch ms;
     * queue_time_ms, prefill_time_ms, e2e_ms as durations; token_written_ms) and the request's attempt. Fields it lacks
     * stay -1.
     */
    public static ServerTruth from(JsonNode infersim) {
        JsonNode choice = infersim.path("choices").path(0);
        JsonNode wall = choice.path("wall");
        long ttft = between(wall, "arrival_ms", "first_token_ms");
        JsonNode written = wall.path("token_written_ms");
        double[] writtenMs = null;
        if (written.isArray()) {
            writtenMs = new double[written.size()];
            for (int i = 0; i < writtenMs.length; i++) {
                writtenMs[i] = written.get(i).asDouble();
            }
        }
        return new ServerTruth(ttft, nanos(wall, "e2e_ms"), nanos(wall, "queue_time_ms"),
                nanos(wall, "prefill_time_ms"), count(choice, "cached_prompt_tokens"), count(choice, "preemptions"),
                infersim.path("time_scale").isNumber() ? infersim.get("time_scale").asDouble() : 1, count(infersim, "replica"),
                epochMs(wall, "arrival_ms"), between(wall, "received_ms", "first_token_written_ms"),
                between(wall, "received_ms", "last_token_written_ms"), epochMs(wall, "received_ms"),
                nanos(wall, "received_lateness_ms"), count(infersim, "attempt"), writtenMs);
    }

    /** Whether the server said what reached the wire, so that the client is checked against that. */
    public boolean atWire() {
        return wireTtftNanos >= 0 && wireE2elNanos >= 0;
    }

    /** The TTFT the client's is checked against: the wire's where the server says, else the planned one. */
    public long clientTtftNanos() {
        return atWire() ? wireTtftNanos : ttftNanos;
    }

    /** The E2EL the client's is checked against: the wire's where the server says, else the planned one. */
    public long clientE2elNanos() {
        return atWire() ? wireE2elNanos : e2elNanos;
    }

    /** The server's bound on how late it read the request's head (0 where it gave none): the server's, not the client's. */
    public long serverReadLatenessNanos() {
        return Math.max(0, receivedLatenessNanos);
    }

    /** When the request reached the server: its head read where the server says, else its engine's arrival; NaN when absent. */
    public double reachedEpochMs() {
        return Double.isNaN(receivedEpochMs) ? arrivalEpochMs : receivedEpochMs;
    }

    private static long between(JsonNode wall, String from, String to) {
        return wall.path(from).isNumber() && wall.path(to).isNumber()
                ? Math.round((wall.get(to).asDouble() - wall.get(from).asDouble()) * 1e6) : -1;
    }

    private static double epochMs(JsonNode wall, String field) {
        return wall.path(field).isNumber() ? wall.get(field).asDouble() : Double.NaN;
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
