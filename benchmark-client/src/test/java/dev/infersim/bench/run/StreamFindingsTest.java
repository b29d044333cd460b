package dev.infersim.bench.run;

import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.bench.measure.ServerTruth;
import dev.infersim.bench.measure.StreamFindings;
import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StreamFindingsTest {
    private static final long MS = 1_000_000;

    /**
     * A request of 32 tokens whose server timeline is TTFT 10 ms and 4 ms a token (decode 124 ms), as the client saw
     * it: first token {@code clientTtftNanos} after the send, the last {@code clientDecodeNanos} after that, in
     * {@code chunks} chunks.
     */
    private static RequestOutcome stream(long index, long clientTtftNanos, long clientDecodeNanos, int chunks) {
        return stream(index, clientTtftNanos, clientDecodeNanos, chunks, 0, Double.NaN);
    }

    /** As above, with {@code reordered} chunks out of order and the server's arrival at {@code arrivalEpochMs}. */
    private static RequestOutcome stream(long index, long clientTtftNanos, long clientDecodeNanos, int chunks,
                                         int reordered, double arrivalEpochMs) {
        long send = sendOf(index);
        long first = send + clientTtftNanos;
        return TestOutcomes.streamed(new WorkloadRequest(index, 0, 16, 0, -1, 32, 32, index, 0, false, "random", null),
                send, first, first + clientDecodeNanos, chunks, 32, reordered,
                new ServerTruth(10 * MS, 10 * MS + 124 * MS, 0, 10 * MS, 0, 0, 1, 0, arrivalEpochMs));
    }

    private static long sendOf(long index) {
        return index * 100 * MS;
    }

    /** The ground-truth block of a window of 20 such requests, as the result holds it. */
    private static ClientKeys.TruthError truthOf(java.util.function.LongFunction<RequestOutcome> request) {
        MeasuredWindow w = new MeasuredWindow(0, 0, GoodputSlo.NONE, null, true);
        for (long i = 0; i < 20; i++) {
            w.record(request.apply(i));
        }
        return w.truthError();
    }

    private static List<String> names(List<StreamFindings.Finding> findings) {
        return findings.stream().map(StreamFindings.Finding::name).toList();
    }

    @Test
    void streamsThatArriveAsTheServerSentThemShowNothing() {
        ClientKeys.TruthError truth = truthOf(i -> stream(i, 11 * MS, 125 * MS, 32));
        assertEquals(List.of(), names(StreamFindings.of(truth, null)));
    }

    /** HAProxy without http-no-delay delivered each 32-token stream in one read, 131 ms after the send. */
    @Test
    void streamsHeldAndReleasedInOneBunchAreTokenCoalescingNamingTheProxySettings() {
        ClientKeys.TruthError truth = truthOf(i -> stream(i, 131 * MS, 0, 32));
        List<StreamFindings.Finding> found = StreamFindings.of(truth, null);
        assertEquals(List.of("token_coalescing"), names(found));
        assertTrue(found.get(0).message().startsWith("20 of 20 streams reached the client in under half the time"),
                found.get(0).message());
        assertTrue(found.get(0).cause().contains("proxy_buffering off") && found.get(0).cause().contains("http-no-delay"));
    }

    @Test
    void aFewStreamsStalledByABusyClientAreNotCoalescing() {
        // 4 of 20 streams read in a bunch (a stalled event loop): under half, so no finding
        ClientKeys.TruthError truth = truthOf(i -> stream(i, 11 * MS, i % 5 == 0 ? 10 * MS : 125 * MS, 32));
        assertEquals(List.of(), names(StreamFindings.of(truth, null)));
    }

    @Test
    void chunksCarryingSeveralTokensAreCoalescingToo() {
        ClientKeys.TruthError truth = truthOf(i -> stream(i, 11 * MS, 125 * MS, 8));
        List<StreamFindings.Finding> found = StreamFindings.of(truth, null);
        assertTrue(names(found).contains("token_coalescing"), names(found).toString());
        assertTrue(found.get(0).message().contains("0.25 chunks per token"), found.get(0).message());
    }

    @Test
    void fewerChunksThanTokensAndTokensGoingBackwardsAreNamed() {
        ClientKeys.TruthError truth = truthOf(i -> stream(i, 11 * MS, 125 * MS, i == 3 ? 30 : 32, i == 7 ? 1 : 0,
                Double.NaN));
        List<StreamFindings.Finding> found = StreamFindings.of(truth, null);
        assertEquals(List.of("lost_tokens", "reordered_tokens"), names(found));
        assertEquals("1 requests received fewer chunks than the server's tokens (2 tokens missing in all)",
                found.get(0).message());
    }

    /** A request retried after a 1 s timeout elsewhere reaches the replica that answers a second after its send. */
    @Test
    void requestsThatReachTheServerLongAfterTheSendAreRetriedOrQueued() {
        double epochAtNanoZero = System.currentTimeMillis() - System.nanoTime() / 1e6;
        ClientKeys.TruthError truth = truthOf(i -> stream(i, 11 * MS, 125 * MS, 32, 0,
                epochAtNanoZero + (sendOf(i) + (i % 4 == 0 ? 1_000 * MS : MS / 2)) / 1e6));
        List<StreamFindings.Finding> found = StreamFindings.of(truth, null);
        assertEquals(List.of("retried_or_queued"), names(found));
        assertTrue(found.get(0).message().startsWith("5 requests reached the server that answered 250 ms or more after "
                + "they were sent"), found.get(0).message());
        assertEquals(List.of(), names(StreamFindings.of(truthOf(i -> stream(i, 11 * MS, 125 * MS, 32, 0,
                epochAtNanoZero + (sendOf(i) + MS / 2) / 1e6)), null)), "half a millisecond on the way is a healthy hop");
    }

    @Test
    void theGatewaysAddedLatencyIsJudgedOnlyAgainstADirectBaseline() {
        ClientKeys.TruthError direct = truthOf(i -> stream(i, 11 * MS, 125 * MS, 32));
        ClientKeys.TruthError slow = truthOf(i -> stream(i, 24 * MS, 125 * MS, 32));
        assertEquals(List.of(), names(StreamFindings.of(slow, null)), "without a baseline it is not judged");
        List<StreamFindings.Finding> found = StreamFindings.of(slow, direct);
        assertEquals(List.of("gateway_latency"), names(found));
        assertEquals(13.0, found.get(0).evidence().get("added_ttft_p50_ms").doubleValue(), 0.1);
        assertNull(StreamFindings.addedTtftMs(slow, null));
        ClientKeys.TruthError quick = truthOf(i -> stream(i, 12 * MS, 125 * MS, 32));
        assertEquals(List.of(), names(StreamFindings.of(quick, direct)), "1 ms added is within 5 ms");
    }

    // ---- against the wire (servers that give received_ms, token_written_ms and attempt) ----

    /** The wall clock (epoch ms) of nanoTime 0, as the window converts the client's instants. */
    private static final double EPOCH_AT_NANO_ZERO = System.currentTimeMillis() - System.nanoTime() / 1e6;

    /**
     * A streamed request as a client reads it from an infersim server that says what reached the wire: sent (and its
     * bytes in the socket) at {@code send}; the server read it {@code toServer} later and wrote token k at
     * {@code written[k]} after that; chunk k was read at {@code read[k]} after the send, by a read whose lateness bound
     * was {@code late[k]}. The server counted {@code attempt} attempts.
     */
    private static RequestOutcome wire(long index, long toServer, long[] written, long[] read, long[] late, int attempt) {
        List<RequestOutcome> ended = new ArrayList<>();
        StreamExchange x = new StreamExchange(new VirtualClientClock(0), null, null, null, null, null,
                (e, outcome) -> ended.add(outcome));
        long send = 1_000 * MS + index * 200 * MS;
        x.prepare(new WorkloadRequest(index, 0, 16, 0, -1, written.length, written.length, index, 0, false, "random", null),
                Buffer.buffer("{}"), SendSchedule.unscheduled(send), false, 60_000);
        x.sentAt(send, send);
        double received = EPOCH_AT_NANO_ZERO + (send + toServer) / 1e6;
        StringBuilder writtenMs = new StringBuilder();
        for (int k = 0; k < written.length; k++) {
            writtenMs.append(k == 0 ? "" : ",").append(received + written[k] / 1e6);
        }
        for (int k = 0; k < read.length; k++) {
            String truth = k < read.length - 1 ? "" : ",\"infersim\":{\"replica\":0,\"attempt\":" + attempt
                    + ",\"time_scale\":1,\"choices\":[{\"index\":0,\"cached_prompt_tokens\":0,\"preemptions\":0,"
                    + "\"wall\":{\"arrival_ms\":" + (received + 0.1) + ",\"first_token_ms\":" + (received + written[0] / 1e6)
                    + ",\"e2e_ms\":" + (written[written.length - 1] / 1e6) + ",\"received_ms\":" + received
                    + ",\"first_token_written_ms\":" + (received + written[0] / 1e6) + ",\"last_token_written_ms\":"
                    + (received + written[written.length - 1] / 1e6) + ",\"token_written_ms\":[" + writtenMs + "]}}]}";
            String chunk = "data: {\"choices\":[{\"index\":0,\"text\":\" w\"" + (k == read.length - 1
                    ? ",\"finish_reason\":\"length\"" : "") + "}],\"usage\":{\"prompt_tokens\":16,\"completion_tokens\":"
                    + (k + 1) + "}" + truth + "}\n\n" + (k == read.length - 1 ? "data: [DONE]\n\n" : "");
            x.read(Buffer.buffer(chunk), send + read[k], late[k]);
        }
        x.ended(send + read[read.length - 1]);
        return ended.get(0);
    }

    /** {@code n} values {@code first}, {@code first + step}, ... */
    private static long[] steps(int n, long first, long step) {
        long[] v = new long[n];
        for (int i = 0; i < n; i++) {
            v[i] = first + i * step;
        }
        return v;
    }

    private static ClientKeys.TruthError wireTruthOf(java.util.function.LongFunction<RequestOutcome> request) {
        MeasuredWindow w = new MeasuredWindow(0, 0, GoodputSlo.NONE, null, true);
        for (long i = 0; i < 20; i++) {
            RequestOutcome x = request.apply(i);
            assertTrue(x.succeeded(), x.errorType() + ": " + x.errorMessage());
            w.record(x);
        }
        return w.truthError();
    }

    /** 16 tokens written 28 ms apart from 100 ms, read 0.3 ms after each reached the client (1 ms on the way in). */
    private static RequestOutcome healthy(long i) {
        return wire(i, MS, steps(16, 100 * MS, 28 * MS), steps(16, 101 * MS + 300_000, 28 * MS), steps(16, 300_000, 0), 1);
    }

    @Test
    void streamsThatReachTheClientAsTheServerWroteThemShowNothingAgainstTheWire() {
        ClientKeys.TruthError truth = wireTruthOf(StreamFindingsTest::healthy);
        assertEquals(List.of(), names(StreamFindings.of(truth, null)));
        assertEquals(20L, truth.requestsAtWire());
        assertEquals(new ClientKeys.TokenPairs(300, 0, 0, 2.0, 0.5), truth.tokenPairs());
        assertEquals(new ClientKeys.Retried(0, 0), truth.retried());
    }

    /**
     * HAProxy without http-no-delay at 5 req/s, --time-scale 0.25: tokens written 28 ms apart reach the client 8 at a
     * time, 10 µs apart, while the client read each within 0.3 ms of its arrival: named, per token.
     */
    @Test
    void tokensHeldOnTheWayAndLetGoInBunchesAreCoalescingPerToken() {
        ClientKeys.TruthError truth = wireTruthOf(i -> {
            long[] read = new long[16];
            for (int k = 0; k < 16; k++) {
                int burstEnd = (k / 8) * 8 + 7; // each token arrives with the last of its 8
                read[k] = 101 * MS + burstEnd * 28 * MS + (k % 8) * 10_000 + 300_000;
            }
            return wire(i, MS, steps(16, 100 * MS, 28 * MS), read, steps(16, 300_000, 0), 1);
        });
        List<StreamFindings.Finding> found = StreamFindings.of(truth, null);
        assertTrue(names(found).contains("token_coalescing"), names(found).toString());
        StreamFindings.Finding f = found.get(names(found).indexOf("token_coalescing"));
        assertEquals(280L, f.evidence().get("token_pairs_coalesced"), f.message()); // 14 of 15 pairs a stream
        assertTrue(f.message().startsWith("280 of 300 pairs of tokens the server sent more than 2.0 ms apart"), f.message());
    }

    /**
     * A starved client (no gateway): its loop stalled 60 ms, so tokens written 28 ms apart were read together, but the
     * read of the earlier one was 60 ms late by the loop's own accounts: the client's, not the path's.
     */
    @Test
    void tokensBunchedByTheClientsOwnLateReadsAreNotCoalescing() {
        ClientKeys.TruthError truth = wireTruthOf(i -> {
            long[] read = steps(16, 101 * MS + 300_000, 28 * MS);
            long[] late = steps(16, 300_000, 0);
            read[4] = read[6] - 20_000; // tokens 4, 5, 6 read in one batch, the loop stalled since token 4 arrived
            read[5] = read[6] - 10_000;
            late[4] = 56 * MS + 300_000;
            late[5] = 28 * MS + 300_000;
            return wire(i, MS, steps(16, 100 * MS, 28 * MS), read, late, 1);
        });
        assertEquals(List.of(), names(StreamFindings.of(truth, null)));
        assertEquals(40, truth.tokenPairs().clientExplained());
        assertEquals(0, truth.tokenPairs().coalesced());
    }

    /** nginx retried a 429 on another replica at once: the server's count says the answer was the second attempt. */
    @Test
    void requestsTheServerAnsweredMoreThanOnceAreHiddenRetries() {
        ClientKeys.TruthError truth = wireTruthOf(i -> i % 5 == 0 ? wire(i, MS, steps(16, 100 * MS, 28 * MS),
                steps(16, 101 * MS + 300_000, 28 * MS), steps(16, 300_000, 0), 2) : healthy(i));
        List<StreamFindings.Finding> found = StreamFindings.of(truth, null);
        assertEquals(List.of("hidden_retries"), names(found));
        assertEquals(4L, found.get(0).evidence().get("requests"));
        assertEquals(2L, found.get(0).evidence().get("max_attempts"));
    }

    /**
     * Without a baseline the server's TTFT at the wire is the baseline: a path that holds every first token 40 ms is
     * named; a client whose own first reads were 40 ms late (its bound says so) is not.
     */
    @Test
    void theServersTtftAtTheWireIsTheBaselineAndTheClientsOwnErrorIsNotThePaths() {
        ClientKeys.TruthError held = wireTruthOf(i -> wire(i, MS, steps(16, 100 * MS, 28 * MS),
                steps(16, 141 * MS + 300_000, 28 * MS), steps(16, 300_000, 0), 1));
        List<StreamFindings.Finding> found = StreamFindings.of(held, null);
        assertEquals(List.of("gateway_latency"), names(found));
        assertEquals(41.0, found.get(0).evidence().get("unexplained_ttft_p50_ms").doubleValue(), 0.1);
        ClientKeys.TruthError starved = wireTruthOf(i -> {
            long[] late = steps(16, 300_000, 0);
            late[0] = 41 * MS;
            return wire(i, MS, steps(16, 100 * MS, 28 * MS), steps(16, 141 * MS + 300_000, 28 * MS), late, 1);
        });
        assertEquals(List.of(), names(StreamFindings.of(starved, null)));
        assertEquals(List.of(), names(StreamFindings.of(wireTruthOf(StreamFindingsTest::healthy), null)));
    }

    /** With a baseline, what lies beyond the client's own error is compared: a busier client through the gateway is not. */
    @Test
    void againstABaselineTheClientsOwnErrorIsLeftOutOnBothSides() {
        ClientKeys.TruthError direct = wireTruthOf(StreamFindingsTest::healthy);
        ClientKeys.TruthError busier = wireTruthOf(i -> {
            long[] late = steps(16, 300_000, 0);
            late[0] = 12 * MS;
            return wire(i, MS, steps(16, 100 * MS, 28 * MS), steps(16, 113 * MS, 28 * MS), late, 1);
        });
        assertEquals(List.of(), names(StreamFindings.of(busier, direct)));
        ClientKeys.TruthError slower = wireTruthOf(i -> wire(i, MS, steps(16, 100 * MS, 28 * MS),
                steps(16, 113 * MS, 28 * MS), steps(16, 300_000, 0), 1));
        assertEquals(List.of("gateway_latency"), names(StreamFindings.of(slower, direct)));
    }

    /**
     * Requests that reached the server 300 ms after the client's bytes were in its socket: named when the client's own
     * loops kept time; not when they were themselves held off their CPUs for 400 ms (the server's were too, on one
     * machine, and it read the requests late).
     */
    @Test
    void lateArrivalsAreNotBlamedOnTheWayWhenTheClientWasHeldUpLongerThanThat() {
        java.util.function.LongFunction<RequestOutcome> late = i -> i % 4 != 0 ? healthy(i) : wire(i, 300 * MS,
                steps(16, 100 * MS, 28 * MS), steps(16, 401 * MS + 300_000, 28 * MS), steps(16, 300_000, 0), 1);
        List<StreamFindings.Finding> found = StreamFindings.of(wireTruthOf(late), null);
        assertTrue(names(found).contains("retried_or_queued"), names(found).toString());
        java.util.function.LongFunction<RequestOutcome> starved = i -> {
            long[] lateness = steps(16, 300_000, 0);
            lateness[0] = 400 * MS;
            return i % 4 != 0 ? healthy(i) : wire(i, 300 * MS, steps(16, 100 * MS, 28 * MS),
                    steps(16, 401 * MS + 300_000, 28 * MS), lateness, 1);
        };
        assertEquals(List.of(), names(StreamFindings.of(wireTruthOf(starved), null)));
    }

    /** A healthy proxy on a loaded machine lets a few pairs through together (its own process waited for a CPU): not named. */
    @Test
    void aFewPairsBunchedOnTheWayAreNotCoalescing() {
        ClientKeys.TruthError truth = wireTruthOf(i -> {
            long[] read = steps(16, 101 * MS + 300_000, 28 * MS);
            if (i % 2 == 0) {
                read[4] = read[5] - 10_000; // token 4 held until token 5 came: 1 pair of 15 in half the streams
            }
            return wire(i, MS, steps(16, 100 * MS, 28 * MS), read, steps(16, 300_000, 0), 1);
        });
        assertEquals(10, truth.tokenPairs().coalesced());
        assertEquals(List.of(), names(StreamFindings.of(truth, null)));
    }
}
