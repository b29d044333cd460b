package dev.infersim.bench;

import java.util.ArrayList;
import java.util.Collections;
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
    public record Finding(String name, String message, String cause, Map<String, Number> evidence) {

        /** Whole numbers as longs, as they were recorded, whichever way the JSON was read. */
        public Finding {
            Map<String, Number> figures = new LinkedHashMap<>();
            evidence.forEach((k, v) -> figures.put(k, v instanceof Integer i ? Long.valueOf(i) : v));
            evidence = Collections.unmodifiableMap(figures);
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
    public static List<Finding> of(ClientKeys.TruthError truth, ClientKeys.TruthError baseline) {
        List<Finding> found = new ArrayList<>();
        ClientKeys.Streams streams = truth.streams();
        long checked = streams.checked();
        long bunched = streams.bunched();
        double chunksPerToken = streams.tokens() == 0 ? Double.NaN : streams.chunks() / (double) streams.tokens();
        if (checked > 0 && bunched > BUNCHED_SHARE * checked || chunksPerToken < BUNCHED_SPAN) {
            found.add(new Finding("token_coalescing", String.format(Locale.ROOT, "%d of %d streams reached the client in "
                    + "under half the time the server took to emit their tokens, %.2f chunks per token against the "
                    + "server's 1: the stream was held on the way and let go in bunches, so ITL reads near zero",
                    bunched, checked, chunksPerToken),
                    "A proxy buffers the response: nginx needs proxy_buffering off for event streams (or the server's "
                            + "X-Accel-Buffering: no), HAProxy option http-no-delay; load balancers and CDNs may buffer "
                            + "by default.",
                    evidence("streams_checked", checked, "streams_bunched", bunched, "chunks_per_token",
                            Double.isNaN(chunksPerToken) ? null : chunksPerToken)));
        }
        long lost = streams.lostTokenRequests();
        if (lost > 0) {
            found.add(new Finding("lost_tokens", String.format(Locale.ROOT, "%d requests received fewer chunks than the "
                    + "server's tokens (%d tokens missing in all)", lost, streams.lostTokens()),
                    "Something between the server and the client dropped stream events: a proxy that rewrites the "
                            + "stream, or one that splices a retried upstream response into the first.",
                    evidence("requests", lost, "tokens", streams.lostTokens())));
        }
        long reordered = streams.reorderedRequests();
        if (reordered > 0) {
            found.add(new Finding("reordered_tokens", String.format(Locale.ROOT, "%d requests received chunks whose "
                    + "running completion_tokens went backwards", reordered),
                    "Stream events arrived out of order: a proxy that mixes upstream responses, or a retry whose "
                            + "response was spliced into the first.",
                    evidence("requests", reordered)));
        }
        long late = truth.lateArrivals();
        if (late > 0) {
            ClientKeys.LagSummary before = truth.preArrivalMs();
            found.add(new Finding("retried_or_queued", String.format(Locale.ROOT, "%d requests reached the server that "
                    + "answered %.0f ms or more after they were sent (send to arrival p99 %.1f ms, max %.1f ms)", late,
                    LATE_ARRIVAL_NANOS / 1e6, before.p99(), before.max()),
                    "A gateway retried them after an attempt at another replica failed or timed out (nginx "
                            + "proxy_next_upstream, HAProxy retry-on), or queued them while every replica was busy "
                            + "(HAProxy maxconn).",
                    evidence("requests", late, "send_to_arrival_p99_ms", before.p99(),
                            "send_to_arrival_max_ms", before.max())));
        }
        Finding latency = gatewayLatency(truth, baseline);
        if (latency != null) {
            found.add(latency);
        }
        return found;
    }

    /** The gateway's added TTFT against the baseline, when over {@link #ADDED_TTFT_MS}; null otherwise. */
    private static Finding gatewayLatency(ClientKeys.TruthError truth, ClientKeys.TruthError baseline) {
        double[] added = addedTtftMs(truth, baseline);
        if (added == null || !(added[0] > ADDED_TTFT_MS)) {
            return null;
        }
        return new Finding("gateway_latency", String.format(Locale.ROOT, "the gateway adds %.2f ms to TTFT at the "
                + "median and %.2f ms at p99 (client TTFT minus the server's, through it against direct)", added[0],
                added[1]),
                "The gateway holds the first chunk (buffering, as with token_coalescing), queues requests before a "
                        + "replica takes them, or spends that long choosing one.",
                evidence("added_ttft_p50_ms", added[0], "added_ttft_p99_ms", added[1]));
    }

    /**
     * Client TTFT minus server TTFT at p50 and p99 through the gateway minus the same direct: {p50, p99} in ms; null
     * without a baseline or without requests on either side.
     */
    public static double[] addedTtftMs(ClientKeys.TruthError truth, ClientKeys.TruthError baseline) {
        if (baseline == null || truth.requests() == 0 || baseline.requests() == 0) {
            return null;
        }
        return new double[] {truth.ttftAbsErrorMs().p50() - baseline.ttftAbsErrorMs().p50(),
                truth.ttftAbsErrorMs().p99() - baseline.ttftAbsErrorMs().p99()};
    }

    /** Figures in order, as a finding states them. */
    private static Map<String, Number> evidence(Object... namesAndFigures) {
        Map<String, Number> m = new LinkedHashMap<>();
        for (int i = 0; i < namesAndFigures.length; i += 2) {
            m.put((String) namesAndFigures[i], (Number) namesAndFigures[i + 1]);
        }
        return m;
    }
}
