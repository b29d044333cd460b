package dev.infersim.bench;

import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.WorkloadRequest;
import org.junit.jupiter.api.Test;

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
    private static Exchange stream(long index, long clientTtftNanos, long clientDecodeNanos, int chunks) {
        Exchange x = new Exchange(null, null, null, null, null);
        x.request = new WorkloadRequest(index, 0, 16, 0, -1, 32, 32, index, 0, false, "random", null);
        long send = index * 100 * MS;
        x.scheduledNanos = send;
        x.originNanos = send;
        x.sendNanos = send;
        x.firstTokenNanos = send + clientTtftNanos;
        x.lastTokenNanos = x.firstTokenNanos + clientDecodeNanos;
        x.usageCompletionTokens = 32;
        x.chunks = chunks;
        x.groundTruth = new GroundTruth(10 * MS, 10 * MS + 124 * MS, 0, 10 * MS, 0, 0, 1, 0, Double.NaN);
        return x;
    }

    /** The ground-truth block of a window of 20 such requests, as the result holds it. */
    private static ClientKeys.TruthError truthOf(java.util.function.LongFunction<Exchange> request) {
        MeasuredWindow w = new MeasuredWindow(0, 0, GoodputSlo.NONE, null, true);
        for (long i = 0; i < 20; i++) {
            Exchange x = request.apply(i);
            w.record(x, x.lastTokenNanos);
        }
        return BenchResultAssembly.groundTruth(w);
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
        ClientKeys.TruthError truth = truthOf(i -> {
            Exchange x = stream(i, 11 * MS, 125 * MS, i == 3 ? 30 : 32);
            x.reorderedChunks = i == 7 ? 1 : 0;
            return x;
        });
        List<StreamFindings.Finding> found = StreamFindings.of(truth, null);
        assertEquals(List.of("lost_tokens", "reordered_tokens"), names(found));
        assertEquals("1 requests received fewer chunks than the server's tokens (2 tokens missing in all)",
                found.get(0).message());
    }

    /** A request retried after a 1 s timeout elsewhere reaches the replica that answers a second after its send. */
    @Test
    void requestsThatReachTheServerLongAfterTheSendAreRetriedOrQueued() {
        double epochAtNanoZero = System.currentTimeMillis() - System.nanoTime() / 1e6;
        ClientKeys.TruthError truth = truthOf(i -> {
            Exchange x = stream(i, 11 * MS, 125 * MS, 32);
            double arrival = epochAtNanoZero + (x.sendNanos + (i % 4 == 0 ? 1_000 * MS : MS / 2)) / 1e6;
            x.groundTruth = new GroundTruth(10 * MS, 134 * MS, 0, 10 * MS, 0, 0, 1, 0, arrival);
            return x;
        });
        List<StreamFindings.Finding> found = StreamFindings.of(truth, null);
        assertEquals(List.of("retried_or_queued"), names(found));
        assertTrue(found.get(0).message().startsWith("5 requests reached the server that answered 250 ms or more after "
                + "they were sent"), found.get(0).message());
        assertEquals(List.of(), names(StreamFindings.of(truthOf(i -> {
            Exchange x = stream(i, 11 * MS, 125 * MS, 32);
            x.groundTruth = new GroundTruth(10 * MS, 134 * MS, 0, 10 * MS, 0, 0, 1, 0,
                    epochAtNanoZero + (x.sendNanos + MS / 2) / 1e6);
            return x;
        }), null)), "half a millisecond on the way is a healthy hop");
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
}
