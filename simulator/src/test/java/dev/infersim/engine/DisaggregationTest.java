package dev.infersim.engine;

import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static dev.infersim.engine.EngineFixtures.h100Llama8b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DisaggregationTest {
    private static final Deployment D = h100Llama8b().maxNumSeqs(8).build();
    private static final KvTransferLink LINK = new KvTransferLink(50, 1);

    /** An engine of {@code blocks} blocks with the deployment's real KV bytes per token (the transfer's size). */
    private static EngineCore engine(Deployment d, int blocks) {
        KvCapacity kv = new KvCapacity(0, 0, KvCapacity.kvBytesPerTokenPerGpu(d), blocks, d.blockSize(), 32_768);
        return new EngineCore(d, kv, new RooflineCostModel(d), SchedulingPolicies.byName("fcfs"));
    }

    private static EngineRequest request(long id, int prompt, int output, long arrival) {
        return new EngineRequest(id, prompt, null, output, 0, EngineRequest.NO_EOS, 0, arrival);
    }

    private static EngineRequest request(long id, int[] ids, int output, long arrival) {
        return new EngineRequest(id, ids.length, ids, output, 0, EngineRequest.NO_EOS, 0, arrival);
    }

    /** Runs steps until the engine is idle, waking for KV arrivals between steps; returns the time at the end. */
    private static long drain(EngineCore engine, long now) {
        while (!engine.isIdle()) {
            StepPlan p = engine.planStep(now);
            if (p == null) {
                now = engine.nextKvArrivalNanos();
                continue;
            }
            now = p.endNanos();
            engine.completeStep(p);
        }
        return now;
    }

    @Test
    void aRemoteDecodeRequestHoldsItsBlocksAfterFinishingUntilReleased() {
        EngineCore prefill = engine(D, 1000);
        EngineRequest r = request(1, 1000, 1, 0).disaggregate(EngineRequest.Disaggregation.REMOTE_DECODE);
        prefill.submit(r);
        drain(prefill, 0);

        assertTrue(r.isFinished());
        assertEquals(FinishReason.LENGTH, r.finishReason());
        assertTrue(r.isKvHeld());
        assertEquals(63, prefill.kvCache().usedBlocks(), "1,000 prompt tokens fill 63 blocks of 16");
        assertArrayEquals(IntStream.range(0, 63).toArray(), r.blockIds());
        assertEquals(1, prefill.kvHeldCount());
        assertEquals(1000, r.computedTokens());

        assertTrue(prefill.releaseKv(r));
        assertEquals(0, prefill.kvCache().usedBlocks());
        assertEquals(0, prefill.kvHeldCount());
        assertFalse(prefill.releaseKv(r), "released once");
    }

    @Test
    void anAbortedRemoteDecodeRequestHoldsNothing() {
        EngineCore prefill = engine(D, 1000);
        EngineRequest r = request(1, 1000, 1, 0).disaggregate(EngineRequest.Disaggregation.REMOTE_DECODE);
        prefill.submit(r);
        prefill.planStep(0);
        assertTrue(prefill.abort(r, FinishReason.ABORT, 0));
        assertFalse(r.isKvHeld());
        assertEquals(0, prefill.kvCache().usedBlocks());
    }

    @Test
    void aRemotePrefillRequestsFirstTokenComesOneStepAfterItsKvArrives() {
        EngineCore decode = engine(D, 1000);
        List<EngineRequest> done = new ArrayList<>();
        List<Long> doneAt = new ArrayList<>();
        decode.connectKvTransfer(LINK, (r, now) -> {
            done.add(r);
            doneAt.add(now);
        });
        EngineRequest r = request(1, 1000, 3, 5_000).disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        decode.submit(r);

        assertNull(decode.planStep(5_000), "pulling KV is no step");
        assertTrue(r.isWaiting());
        assertEquals(1, decode.waitingCount(), "vLLM counts a request waiting for remote KV as waiting");
        assertFalse(decode.isIdle());
        assertEquals(63, decode.kvCache().usedBlocks(), "blocks for the whole prompt, allocated before the pull");
        double bytesPerToken = KvCapacity.kvBytesPerTokenPerGpu(D);
        assertEquals(131_072, bytesPerToken, "Llama-3.1-8B: 32 layers x 8 KV heads x 128 x K and V x 2 bytes");
        long transfer = Math.round(1000 * bytesPerToken / 50) + 1_000_000;
        assertEquals(5_000, r.kvTransferStartNanos());
        assertEquals(5_000 + transfer, r.kvTransferEndNanos());
        assertEquals(5_000 + transfer, decode.nextKvArrivalNanos());
        assertEquals(1000, r.kvTransferTokens());

        assertNull(decode.planStep(5_000 + transfer - 1), "not before the KV has arrived");
        StepPlan first = decode.planStep(5_000 + transfer);
        assertEquals(List.of(r), done);
        assertEquals(List.of(5_000 + transfer), doneAt);
        assertEquals(1, first.size());
        assertEquals(1, first.newTokens(0), "only the last prompt token is computed, to sample from");
        long oneToken = new RooflineCostModel(D).stepNanos(new BatchShape().addPrefill(1, 999, true));
        assertEquals(oneToken, first.durationNanos());
        decode.completeStep(first);
        assertEquals(5_000 + transfer + oneToken, r.firstTokenNanos(), "TTFT = transfer + one step");
        assertEquals(5_000 + transfer, r.firstScheduledNanos());
        assertEquals(1, decode.promptTokensComputed());
        drain(decode, first.endNanos());
        assertTrue(r.isFinished());
        assertEquals(3, r.outputTokens());
        assertEquals(0, decode.kvCache().usedBlocks());
        assertEquals(1, decode.kvTransfers());
        assertEquals(1000, decode.kvTransferredTokens());
    }

    @Test
    void theLocalPrefixCacheShortensThePull() {
        Deployment d = h100Llama8b().maxNumSeqs(8).enablePrefixCaching(true).build();
        EngineCore decode = engine(d, 1000);
        decode.connectKvTransfer(LINK, null);
        int[] ids = IntStream.range(0, 400).toArray();
        decode.submit(request(1, ids, 1, 0));
        long now = drain(decode, 0);
        EngineRequest r = request(2, ids, 2, now).disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        decode.submit(r);
        decode.planStep(now);
        assertEquals(384, r.cachedPromptTokens(), "24 whole blocks of the prompt were cached here");
        assertEquals(16, r.kvTransferTokens());
    }

    @Test
    void pullsShareTheLinkFirstComeFirstServed() {
        EngineCore decode = engine(D, 1000);
        decode.connectKvTransfer(LINK, null);
        EngineRequest a = request(1, 1000, 2, 0).disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        EngineRequest b = request(2, 500, 2, 0).disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        decode.submit(a);
        decode.submit(b);
        decode.planStep(0);
        long wireA = LINK.wireNanos(1000, KvCapacity.kvBytesPerTokenPerGpu(D));
        long wireB = LINK.wireNanos(500, KvCapacity.kvBytesPerTokenPerGpu(D));
        assertEquals(wireA + 1_000_000, a.kvTransferEndNanos());
        assertEquals(wireA + wireB + 1_000_000, b.kvTransferEndNanos(), "b's bytes follow a's on the link");
        assertEquals(2, decode.kvLoadingCount());
    }

    @Test
    void kvThatArrivesDuringAStepJoinsAtTheNextStepAheadOfNewArrivals() {
        EngineCore decode = engine(D, 1000);
        decode.connectKvTransfer(LINK, null);
        EngineRequest busy = request(1, 4000, 50, 0);
        decode.submit(busy);
        StepPlan prefill = decode.planStep(0);
        EngineRequest pulled = request(2, 100, 2, 1).disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        decode.submit(pulled);
        long now = prefill.endNanos();
        decode.completeStep(prefill);
        StepPlan s = decode.planStep(now);
        assertEquals(1, s.size(), "the pull began at this step's start; its KV is not there yet");
        long sEnd = s.endNanos(); // the plan object is the engine's, reused by the next planStep
        assertTrue(pulled.kvTransferEndNanos() < sEnd);
        EngineRequest later = request(3, 100, 2, s.startNanos() + 1);
        decode.submit(later);
        decode.completeStep(s);
        StepPlan next = decode.planStep(sEnd);
        assertEquals(List.of(busy, pulled, later), List.of(next.request(0), next.request(1), next.request(2)),
                "the arrived request goes ahead of the queue, as vLLM's skipped_waiting does under FCFS");
        assertEquals(sEnd, pulled.firstScheduledNanos());
    }

    @Test
    void noPullBeginsWhileItsBlocksDoNotFit() {
        EngineCore decode = engine(D, 70);
        decode.connectKvTransfer(LINK, null);
        EngineRequest big = request(1, 1000, 20, 0);
        decode.submit(big);
        StepPlan p = decode.planStep(0);
        EngineRequest pulled = request(2, 200, 2, 0).disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        decode.submit(pulled);
        long now = p.endNanos();
        decode.completeStep(p);
        StepPlan second = decode.planStep(now);
        now = second.endNanos();
        decode.completeStep(second);
        assertEquals(-1, pulled.kvTransferStartNanos(), "13 blocks needed, 7 free");
        drain(decode, now);
        assertTrue(pulled.isFinished());
        assertEquals(big.finishedNanos(), pulled.kvTransferStartNanos(), "the pull began once the big request's blocks were free");
    }

    @Test
    void anAbortWhileThePullRunsFreesTheBlocksAndReleasesTheRemoteOnes() {
        EngineCore decode = engine(D, 1000);
        List<EngineRequest> released = new ArrayList<>();
        decode.connectKvTransfer(LINK, (r, now) -> released.add(r));
        EngineRequest loading = request(1, 1000, 2, 0).disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        EngineRequest queued = request(2, 1000, 2, 0).disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        decode.submit(loading);
        decode.planStep(0);
        decode.submit(queued);
        assertTrue(decode.abort(loading, FinishReason.ABORT, 10));
        assertTrue(decode.abort(queued, FinishReason.ABORT, 10));
        assertEquals(List.of(loading, queued), released);
        assertEquals(0, decode.kvCache().usedBlocks());
        assertTrue(decode.isIdle());
        assertEquals(Long.MAX_VALUE, decode.nextKvArrivalNanos());
    }

    @Test
    void aRemotePrefillNeedsAConnectorAndTheCostModel() {
        EngineCore plain = engine(D, 100);
        EngineRequest r = request(1, 10, 1, 0).disaggregate(EngineRequest.Disaggregation.REMOTE_PREFILL);
        assertThrows(IllegalArgumentException.class, () -> plain.submit(r));
        EngineCore fixed = EngineCore.fixed(D, new KvCapacity(0, 0, 1, 100, 16, 1000), SchedulingPolicies.byName("fcfs"),
                FixedTiming.of(100, 50), 1);
        ConfigException e = assertThrows(ConfigException.class, () -> fixed.connectKvTransfer(LINK, null));
        assertTrue(e.getMessage().contains("--timing fixed"), e.getMessage());
    }

    @Test
    void theLinkRefusesNonsense() {
        assertThrows(ConfigException.class, () -> new KvTransferLink(0, 1));
        assertThrows(ConfigException.class, () -> new KvTransferLink(50, -1));
        assertThrows(ConfigException.class, () -> new KvTransferLink(Double.NaN, 1));
    }
}
