package dev.infersim.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What happened to the streams between an infersim server and the client, read from a {@code --validate} run's ground
 * truth (the {@code infersim_ground_truth} of its result): a gateway, proxy or load balancer in between shows here.
 * Each finding names its evidence and its likely cause:
 * <ul>
 *   <li>{@code token_coalescing}: over {@value #BUNCHED_SHARE} of the streams reached the client in under
 *   {@value #BUNCHED_SPAN} of the time the server took to emit their tokens (streams of 2 or more tokens the server
 *   decoded for at least {@value #MIN_DECODE_NANOS} ns), or their chunks carried on average more than 1 /
 *   {@value #BUNCHED_SPAN} tokens each while the server sends one per chunk: the stream was held and let go in
 *   bunches, so ITL reads near zero.</li>
 *   <li>{@code lost_tokens}, {@code reordered_tokens}: requests that received fewer chunks than the server's tokens,
 *   or whose running completion_tokens went backwards.</li>
 *   <li>{@code retried_or_queued}: requests that reached the server that answered {@value #LATE_ARRIVAL_NANOS} ns
 *   or more after the client sent them (by the server's wall clock against the client's, so on one machine or clocks
 *   kept in step): a gateway retried them after a failed or timed-out attempt at another replica, or held them in a
 *   queue. A retry after a timeout is never that quick, and no healthy hop that slow.</li>
 *   <li>{@code gateway_latency}: with a direct baseline run ({@code --baseline-url}), the TTFT the client saw beyond
 *   the server's own (client TTFT minus server TTFT) is more than {@value #ADDED_TTFT_MS} ms longer at the median
 *   through the gateway than direct, where the client's and the network's own share is the same. Without a baseline
 *   that difference is reported, not judged: it also holds the client's share.</li>
 * </ul>
 */
public final class StreamFindings {
    static final double BUNCHED_SPAN = 0.5;
    static final double BUNCHED_SHARE = 0.5;
    static final long MIN_DECODE_NANOS = 10_000_000;
    static final double ADDED_TTFT_MS = 5;
    static final long LATE_ARRIVAL_NANOS = 250_000_000;

    /**
     * One finding: a stable name, what was seen with its figures, the likely cause, and the figures as data.
     *
     * @param name     e.g. {@code token_coalescing}
     * @param message  what was seen, one sentence with its figures
     * @param cause    what usually causes it and how to fix it
     * @param evidence the figures
     */
    public record Finding(String name, String message, String cause, Map<String, Object> evidence) {

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("message", message);
            m.put("cause", cause);
            m.put("evidence", evidence);
            return m;
        }
    }

    private StreamFindings() {
    }

    /**
     * The findings of a run from its ground truth; with a direct baseline run's ground truth too, the gateway's own
     * latency.
     *
     * @param truth    the run's {@code infersim_ground_truth}
     * @param baseline the baseline run's {@code infersim_ground_truth}, or null without one
     */
    public static List<Finding> of(Map<String, Object> truth, Map<String, Object> baseline) {
        List<Finding> found = new ArrayList<>();
        Map<String, Object> streams = map(truth.get("streams"));
        if (streams == null) {
            return found;
        }
        long checked = count(streams, "checked");
        long bunched = count(streams, "bunched");
        double chunksPerToken = count(streams, "tokens") == 0 ? Double.NaN
                : count(streams, "chunks") / (double) count(streams, "tokens");
        if (checked > 0 && bunched > BUNCHED_SHARE * checked || chunksPerToken < BUNCHED_SPAN) {
            found.add(new Finding("token_coalescing", String.format(Locale.ROOT, "%d of %d streams reached the client in "
                    + "under half the time the server took to emit their tokens, %.2f chunks per token against the "
                    + "server's 1: the stream was held on the way and let go in bunches, so ITL reads near zero",
                    bunched, checked, chunksPerToken),
                    "A proxy buffers the response: nginx needs proxy_buffering off for event streams (or the server's "
                            + "X-Accel-Buffering: no), HAProxy option http-no-delay; load balancers and CDNs may buffer "
                            + "by default.",
                    BenchResultAssembly.ordered("streams_checked", checked, "streams_bunched", bunched, "chunks_per_token",
                            Double.isNaN(chunksPerToken) ? null : chunksPerToken)));
        }
        long lost = count(streams, "lost_token_requests");
        if (lost > 0) {
            found.add(new Finding("lost_tokens", String.format(Locale.ROOT, "%d requests received fewer chunks than the "
                    + "server's tokens (%d tokens missing in all)", lost, count(streams, "lost_tokens")),
                    "Something between the server and the client dropped stream events: a proxy that rewrites the "
                            + "stream, or one that splices a retried upstream response into the first.",
                    BenchResultAssembly.ordered("requests", lost, "tokens", count(streams, "lost_tokens"))));
        }
        long reordered = count(streams, "reordered_requests");
        if (reordered > 0) {
            found.add(new Finding("reordered_tokens", String.format(Locale.ROOT, "%d requests received chunks whose "
                    + "running completion_tokens went backwards", reordered),
                    "Stream events arrived out of order: a proxy that mixes upstream responses, or a retry whose "
                            + "response was spliced into the first.",
                    BenchResultAssembly.ordered("requests", reordered)));
        }
        long late = count(truth, "late_arrivals");
        if (late > 0) {
            Map<String, Object> before = map(truth.get("pre_arrival_ms"));
            found.add(new Finding("retried_or_queued", String.format(Locale.ROOT, "%d requests reached the server that "
                    + "answered %.0f ms or more after they were sent (send to arrival p99 %.1f ms, max %.1f ms)", late,
                    LATE_ARRIVAL_NANOS / 1e6, number(before, "p99"), number(before, "max")),
                    "A gateway retried them after an attempt at another replica failed or timed out (nginx "
                            + "proxy_next_upstream, HAProxy retry-on), or queued them while every replica was busy "
                            + "(HAProxy maxconn).",
                    BenchResultAssembly.ordered("requests", late, "send_to_arrival_p99_ms", number(before, "p99"),
                            "send_to_arrival_max_ms", number(before, "max"))));
        }
        Finding latency = gatewayLatency(truth, baseline);
        if (latency != null) {
            found.add(latency);
        }
        return found;
    }

    /** The gateway's added TTFT against the baseline, when over {@link #ADDED_TTFT_MS}; null otherwise. */
    private static Finding gatewayLatency(Map<String, Object> truth, Map<String, Object> baseline) {
        double[] added = addedTtftMs(truth, baseline);
        if (added == null || !(added[0] > ADDED_TTFT_MS)) {
            return null;
        }
        return new Finding("gateway_latency", String.format(Locale.ROOT, "the gateway adds %.2f ms to TTFT at the "
                + "median and %.2f ms at p99 (client TTFT minus the server's, through it against direct)", added[0],
                added[1]),
                "The gateway holds the first chunk (buffering, as with token_coalescing), queues requests before a "
                        + "replica takes them, or spends that long choosing one.",
                BenchResultAssembly.ordered("added_ttft_p50_ms", added[0], "added_ttft_p99_ms", added[1]));
    }

    /**
     * Client TTFT minus server TTFT at p50 and p99 through the gateway minus the same direct: {p50, p99} in ms; null
     * without a baseline or without requests on either side.
     */
    public static double[] addedTtftMs(Map<String, Object> truth, Map<String, Object> baseline) {
        if (baseline == null || count(truth, "requests") == 0 || count(baseline, "requests") == 0) {
            return null;
        }
        Map<String, Object> through = map(truth.get("ttft_abs_error_ms"));
        Map<String, Object> direct = map(baseline.get("ttft_abs_error_ms"));
        return new double[] {number(through, "p50") - number(direct, "p50"),
                number(through, "p99") - number(direct, "p99")};
    }

    /** The findings as the result's JSON list. */
    public static List<Map<String, Object>> toJson(List<Finding> findings) {
        return findings.stream().map(Finding::toJson).toList();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return o instanceof Map<?, ?> m ? (Map<String, Object>) m : null;
    }

    private static long count(Map<String, Object> m, String key) {
        return m.get(key) instanceof Number n ? n.longValue() : 0;
    }

    private static double number(Map<String, Object> m, String key) {
        return m.get(key) instanceof Number n ? n.doubleValue() : Double.NaN;
    }

}
