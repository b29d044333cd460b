package dev.infersim.bench.measure;

import dev.infersim.common.ReadLateness;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What happened to the streams between an infersim server and the client, read from a {@code --validate} run's ground
 * truth (the {@code infersim_ground_truth} of its result): a gateway, proxy or load balancer in between shows here.
 * Each finding names its evidence and its likely cause, and none blames the path for what the client's own timing error
 * explains (the client bounds it per read, {@link ReadLateness}, and per request, {@link RequestOutcome#ttftErrorBoundNanos()}):
 * <ul>
 *   <li>{@code token_coalescing}: of the pairs of consecutive tokens the server handed to the wire more than
 *   {@value #COALESCED_GAP_NANOS} ns apart, at least {@value #COALESCED_MIN} and {@value #COALESCED_SHARE} of them
 *   reached the client within {@value #COALESCED_WITHIN_NANOS} ns of each other while the client's read of the earlier
 *   one was not late enough to explain it: the stream was held on the way and let go in bunches. From servers that give
 *   no per-token wire instants: over {@value #BUNCHED_SHARE} of the streams reached the client in under
 *   {@value #BUNCHED_SPAN} of the time the server took to emit their tokens (streams of 2 or more tokens the server
 *   decoded for at least {@value #MIN_DECODE_NANOS} ns). Either way, also when chunks carried on average more than 1 /
 *   {@value #BUNCHED_SPAN} tokens each while the server sends one per chunk.</li>
 *   <li>{@code lost_tokens}, {@code reordered_tokens}: requests that received fewer chunks than the server's tokens,
 *   or whose running completion_tokens went backwards.</li>
 *   <li>{@code hidden_retries}: requests the server answered more than once, by its own count of each client request's
 *   attempts ({@code x-infersim-attempt}, by the {@code x-request-id} the client sends): a gateway retried them after an
 *   answer the client never saw.</li>
 *   <li>{@code retried_or_queued}: requests (answered once) that reached the server that answered
 *   {@value #LATE_ARRIVAL_NANOS} ns or more after the client's bytes were in its socket (by the server's wall clock
 *   against the client's, so on one machine or clocks kept in step): a gateway retried them after a failed or timed-out
 *   attempt at a replica of another process, or held them in a queue. A retry after a timeout is never that quick, and
 *   no healthy hop that slow. Not named when the longest such delay is within the client's own TTFT error bound at
 *   p99: a machine that holds the client's loops off their CPUs that long holds the server's too, and the server read
 *   the request late.</li>
 *   <li>{@code gateway_latency}: the TTFT error beyond the client's own bound on it (client TTFT minus the server's TTFT
 *   at the wire, less the client's send lag and first-read lateness) is more than {@value #ADDED_TTFT_MS} ms at the
 *   median, and more than the client's own bound at p99 (a machine that delays the client's reads delays the server's
 *   too, which the client cannot see). With a direct baseline run ({@code --baseline-url}) the same beyond-the-bound
 *   error through the gateway is compared with the direct run's instead: more than {@value #ADDED_TTFT_MS} ms longer at
 *   the median.</li>
 * </ul>
 */
public final class StreamFindings {
    static final double BUNCHED_SPAN = 0.5;
    static final double BUNCHED_SHARE = 0.5;
    static final long MIN_DECODE_NANOS = 10_000_000;
    static final double ADDED_TTFT_MS = 5;
    static final long LATE_ARRIVAL_NANOS = 250_000_000;
    /** A server gap above this is one a healthy path keeps: 4 times the window it must not shrink into. */
    static final long COALESCED_GAP_NANOS = 2_000_000;
    /** Tokens that reach the client within this of each other arrived together. */
    static final long COALESCED_WITHIN_NANOS = 500_000;
    /**
     * A buffering proxy holds most tokens (HAProxy's default: 83-90% of the pairs); a healthy one on a loaded machine,
     * whose own process now and then waits for a CPU, let 14% through together (nginx, load average 24).
     */
    static final double COALESCED_SHARE = 0.25;
    static final long COALESCED_MIN = 3;

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
        double chunksPerToken = streams.tokens() == 0 ? Double.NaN : streams.chunks() / (double) streams.tokens();
        ClientKeys.TokenPairs pairs = truth.tokenPairs();
        if (pairs != null && pairs.judged() > 0) {
            Finding coalescing = tokenCoalescing(pairs, chunksPerToken);
            if (coalescing != null) {
                found.add(coalescing);
            }
        } else if (streamsBunched(streams, chunksPerToken)) {
            long checked = streams.checked();
            long bunched = streams.bunched();
            found.add(new Finding("token_coalescing", String.format(Locale.ROOT, "%d of %d streams reached the client in "
                    + "under half the time the server took to emit their tokens, %.2f chunks per token against the "
                    + "server's 1: the stream was held on the way and let go in bunches, so ITL reads near zero",
                    bunched, checked, chunksPerToken),
                    COALESCING_CAUSE, evidence("streams_checked", checked, "streams_bunched", bunched, "chunks_per_token",
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
        ClientKeys.Retried retried = truth.retried();
        if (retried != null && retried.requests() > 0) {
            found.add(new Finding("hidden_retries", String.format(Locale.ROOT, "%d requests were answered by the server "
                    + "more than once (up to %d attempts, by its count of each x-request-id the client sent): the client "
                    + "saw only the last answer", retried.requests(), retried.maxAttempts()),
                    "A gateway retried them after an answer the client never saw: nginx proxy_next_upstream (http_429, "
                            + "http_503, error, timeout, with non_idempotent for POST), HAProxy retry-on with retries. "
                            + "Each retry is load the server carried and latency the client was not told about.",
                    evidence("requests", retried.requests(), "max_attempts", retried.maxAttempts())));
        }
        long late = truth.lateArrivals();
        ClientKeys.LagSummary bound = truth.ttftErrorBoundMs();
        if (late > 0 && (bound == null || bound.samples() == 0 || truth.preArrivalMs().max() > bound.p99())) {
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

    private static final String COALESCING_CAUSE = "A proxy buffers the response: nginx needs proxy_buffering off for "
            + "event streams (or the server's X-Accel-Buffering: no), HAProxy option http-no-delay; load balancers and "
            + "CDNs may buffer by default. (A proxy whose own process waits for a CPU on a loaded machine bunches some "
            + "tokens too, fewer than a buffering one.)";

    /** The per-token judgement ({@link ClientKeys.TokenPairs}): named at {@link #COALESCED_MIN} and {@link #COALESCED_SHARE}. */
    private static Finding tokenCoalescing(ClientKeys.TokenPairs pairs, double chunksPerToken) {
        boolean held = pairs.coalesced() >= COALESCED_MIN && pairs.coalesced() >= COALESCED_SHARE * pairs.judged();
        if (!held && !(chunksPerToken < BUNCHED_SPAN)) {
            return null;
        }
        return new Finding("token_coalescing", String.format(Locale.ROOT, "%d of %d pairs of tokens the server sent more "
                + "than %.1f ms apart reached the client within %.1f ms of each other (%d more the client's own late "
                + "reads explain), %.2f chunks per token against the server's 1: the stream was held on the way and let "
                + "go in bunches, so ITL reads near zero", pairs.coalesced(), pairs.judged(), pairs.gapOverMs(),
                pairs.withinMs(), pairs.clientExplained(), chunksPerToken),
                COALESCING_CAUSE, evidence("token_pairs_judged", pairs.judged(), "token_pairs_coalesced", pairs.coalesced(),
                        "token_pairs_client_explained", pairs.clientExplained(), "chunks_per_token",
                        Double.isNaN(chunksPerToken) ? null : chunksPerToken));
    }

    /** The judgement by whole streams, for servers without per-token wire instants. */
    private static boolean streamsBunched(ClientKeys.Streams streams, double chunksPerToken) {
        return streams.checked() > 0 && streams.bunched() > BUNCHED_SHARE * streams.checked()
                || chunksPerToken < BUNCHED_SPAN;
    }

    /**
     * The TTFT the path between the wire and the client adds: against the baseline, when over {@link #ADDED_TTFT_MS};
     * without one, when the error beyond the client's own bound is over {@link #ADDED_TTFT_MS} at the median and over
     * the bound's p99. Null otherwise.
     */
    private static Finding gatewayLatency(ClientKeys.TruthError truth, ClientKeys.TruthError baseline) {
        double[] added = addedTtftMs(truth, baseline);
        if (added != null) {
            if (!(added[0] > ADDED_TTFT_MS)) {
                return null;
            }
            return new Finding("gateway_latency", String.format(Locale.ROOT, "the gateway adds %.2f ms to TTFT at the "
                    + "median and %.2f ms at p99 (client TTFT minus the server's, beyond the client's own timing error, "
                    + "through it against direct)", added[0], added[1]), GATEWAY_LATENCY_CAUSE,
                    evidence("added_ttft_p50_ms", added[0], "added_ttft_p99_ms", added[1]));
        }
        ClientKeys.LagSummary beyond = truth.unexplainedTtftErrorMs();
        ClientKeys.LagSummary bound = truth.ttftErrorBoundMs();
        if (baseline != null || beyond == null || bound == null || beyond.samples() == 0
                || !(beyond.p50() > ADDED_TTFT_MS) || !(beyond.p50() > bound.p99())) {
            return null;
        }
        return new Finding("gateway_latency", String.format(Locale.ROOT, "TTFT reached the client %.2f ms later at the "
                + "median (%.2f ms at p99) than the server's TTFT at the wire plus the client's own timing error "
                + "(its bound: p50 %.2f, p99 %.2f ms): something between the server and the client added it", beyond.p50(),
                beyond.p99(), bound.p50(), bound.p99()), GATEWAY_LATENCY_CAUSE,
                evidence("unexplained_ttft_p50_ms", beyond.p50(), "unexplained_ttft_p99_ms", beyond.p99(),
                        "client_error_bound_p99_ms", bound.p99()));
    }

    private static final String GATEWAY_LATENCY_CAUSE = "The gateway holds the first chunk (buffering, as with "
            + "token_coalescing), queues requests before a replica takes them, or spends that long choosing one.";

    /**
     * Client TTFT minus server TTFT at p50 and p99 through the gateway minus the same direct: {p50, p99} in ms; null
     * without a baseline or without requests on either side. Where both runs bounded the client's own error, the
     * error beyond that bound is compared, so that a client busier in one run than in the other is not the gateway.
     */
    public static double[] addedTtftMs(ClientKeys.TruthError truth, ClientKeys.TruthError baseline) {
        if (baseline == null || truth.requests() == 0 || baseline.requests() == 0) {
            return null;
        }
        ClientKeys.LagSummary through = truth.unexplainedTtftErrorMs();
        ClientKeys.LagSummary direct = baseline.unexplainedTtftErrorMs();
        if (through != null && direct != null && through.samples() > 0 && direct.samples() > 0) {
            return new double[] {through.p50() - direct.p50(), through.p99() - direct.p99()};
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
