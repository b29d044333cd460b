package dev.infersim.engine;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import static dev.infersim.engine.EngineFixtures.drain;
import static dev.infersim.engine.EngineFixtures.engine;
import static dev.infersim.engine.EngineFixtures.h100Llama8b;
import static dev.infersim.engine.EngineFixtures.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SchedulerTest {

    @Test
    void conservesBlocksAfterEveryStepUnderRandomWorkloads() {
        for (int seed = 1; seed <= 5; seed++) {
            SplittableRandom rng = new SplittableRandom(seed);
            Deployment d = h100Llama8b().maxNumSeqs(32).maxNumBatchedTokens(512).build();
            EngineCore engine = engine(d, 200, seed % 2 == 0 ? "fcfs" : "priority");
            List<EngineRequest> live = new ArrayList<>();
            int[] sharedPrefix = rng.ints(64, 0, 1000).toArray();
            long now = 0;
            for (int step = 0; step < 3000; step++) {
                if (rng.nextInt(3) == 0) {
                    EngineRequest r = randomRequest(rng, step, sharedPrefix);
                    engine.submit(r);
                    live.add(r);
                }
                if (rng.nextInt(50) == 0 && !live.isEmpty()) {
                    engine.abort(live.get(rng.nextInt(live.size())), FinishReason.ABORT, now);
                }
                StepPlan plan = engine.planStep(now);
                if (plan != null) {
                    assertTrue(plan.tokens() <= d.maxNumBatchedTokens(), "budget exceeded");
                    assertTrue(plan.size() <= d.maxNumSeqs(), "max-num-seqs exceeded");
                    now = plan.endNanos();
                    engine.completeStep(plan);
                }
                live.removeIf(EngineRequest::isFinished);
                assertBlocksConserved(engine, live);
            }
        }
    }

    private static EngineRequest randomRequest(SplittableRandom rng, long id, int[] sharedPrefix) {
        int prompt = 1 + rng.nextInt(700);
        int[] ids = rng.ints(prompt, 0, 1000).toArray();
        if (rng.nextBoolean()) {
            System.arraycopy(sharedPrefix, 0, ids, 0, Math.min(prompt, sharedPrefix.length));
        }
        return new EngineRequest(id, prompt, ids, 1 + rng.nextInt(300), 0, 1 + rng.nextInt(300), rng.nextInt(3), id);
    }

    /** Every block is free xor referenced, and reference counts equal the number of running requests holding it. */
    private static void assertBlocksConserved(EngineCore engine, List<EngineRequest> live) {
        KvCacheManager kv = engine.kvCache();
        Map<Integer, Integer> holders = new java.util.HashMap<>();
        for (EngineRequest r : live) {
            if (!r.isRunning()) {
                assertEquals(0, r.numBlocks, r + " holds blocks while not running");
                continue;
            }
            Set<Integer> own = new HashSet<>();
            for (int i = 0; i < r.numBlocks; i++) {
                assertTrue(own.add(r.blocks[i]), r + " holds a block twice");
                holders.merge(r.blocks[i], 1, Integer::sum);
            }
            assertTrue(r.numBlocks * kv.blockSize() >= r.computedTokens, r + " computed beyond its blocks");
        }
        for (int b = 0; b < kv.numBlocks(); b++) {
            assertEquals(holders.getOrDefault(b, 0).intValue(), kv.referenceCount(b), "reference count of block " + b);
        }
        assertEquals(kv.numBlocks() - holders.size(), kv.freeBlocks(), "free blocks");
    }

    @Test
    void preemptsNewestRequestWhenBlocksRunOut() {
        Deployment d = h100Llama8b().enablePrefixCaching(false).build();
        EngineCore engine = engine(d, 6, "fcfs"); // 96 tokens of KV
        EngineRequest oldest = request(1, 30, 30);
        EngineRequest middle = request(2, 30, 30);
        EngineRequest newest = request(3, 30, 30);
        engine.submit(oldest);
        engine.submit(middle);
        engine.submit(newest);
        long now = 0;
        StepPlan plan = engine.planStep(now);
        assertEquals(3, plan.size(), "all three prompts fit in 6 blocks");
        now = plan.endNanos();
        engine.completeStep(plan);
        // decoding grows each sequence past 32 tokens: the oldest request's third block must come from the newest
        EngineRequest firstPreempted = null;
        for (int i = 0; i < 10 && firstPreempted == null; i++) {
            plan = engine.planStep(now);
            if (plan.preemptedCount() > 0) {
                firstPreempted = plan.preempted(0);
            }
            now = plan.endNanos();
            engine.completeStep(plan);
        }
        assertSame(newest, firstPreempted);
        assertEquals(1, newest.preemptions());
        assertTrue(newest.isWaiting());
        assertEquals(0, oldest.preemptions());
        drain(engine, now);
        assertTrue(oldest.isFinished() && middle.isFinished() && newest.isFinished());
        assertEquals(30, newest.outputTokens(), "a preempted request recomputes and still produces every token");
    }

    @Test
    void priorityPolicyPreemptsLeastImportantRequest() {
        Deployment d = h100Llama8b().enablePrefixCaching(false).build();
        EngineCore engine = engine(d, 6, "priority");
        EngineRequest urgent = new EngineRequest(1, 30, null, 100, 0, EngineRequest.NO_EOS, 0, 10);
        EngineRequest lax = new EngineRequest(2, 30, null, 100, 0, EngineRequest.NO_EOS, 5, 0);
        EngineRequest normal = new EngineRequest(3, 30, null, 100, 0, EngineRequest.NO_EOS, 1, 20);
        engine.submit(lax);
        engine.submit(urgent);
        engine.submit(normal);
        long now = 0;
        EngineRequest victim = null;
        while (victim == null) {
            StepPlan plan = engine.planStep(now);
            if (plan.preemptedCount() > 0) {
                victim = plan.preempted(0);
            }
            now = plan.endNanos();
            engine.completeStep(plan);
        }
        assertSame(lax, victim, "largest priority value is least important");
    }

    @Test
    void chunksLongPrefillsWithinTheTokenBudget() {
        Deployment d = h100Llama8b().maxNumBatchedTokens(512).maxNumSeqs(16).build();
        EngineCore engine = engine(d, 1000, "fcfs");
        EngineRequest longPrompt = request(1, 2000, 4);
        engine.submit(longPrompt);
        engine.submit(request(2, 100, 4));
        long now = 0;
        int prefillSteps = 0;
        for (StepPlan p = engine.planStep(now); p != null; p = engine.planStep(now)) {
            assertTrue(p.tokens() <= 512, "step of " + p.tokens() + " tokens");
            if (longPrompt.firstTokenNanos() < 0) {
                prefillSteps++;
            }
            now = p.endNanos();
            engine.completeStep(p);
        }
        assertEquals(4, prefillSteps, "2000 prompt tokens in chunks of at most 512");
        assertEquals(4, longPrompt.outputTokens());
    }

    @Test
    void withoutChunkedPrefillAPromptRunsWhole() {
        Deployment d = h100Llama8b().maxNumBatchedTokens(4096).enableChunkedPrefill(false).maxModelLen(4096).build();
        EngineCore engine = engine(d, 1000, "fcfs");
        engine.submit(request(1, 3000, 2));
        engine.submit(request(2, 3000, 2));
        StepPlan first = engine.planStep(0);
        assertEquals(1, first.size(), "the second prompt does not fit the remaining budget and is not chunked");
        assertEquals(3000, first.newTokens(0));
    }

    @Test
    void rejectsPromptsThatLeaveNoRoomForOutput() {
        Deployment d = h100Llama8b().maxModelLen(1024).build();
        EngineCore engine = engine(d, 1000, "fcfs");
        assertNull(engine.rejectionReason(1023));
        assertNotNull(engine.rejectionReason(1024));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> engine.submit(request(1, 1500, 10)));
        assertTrue(e.getMessage().contains("1024"), e.getMessage());
    }

    @Test
    void clipsOutputAtMaxModelLen() {
        Deployment d = h100Llama8b().maxModelLen(1024).build();
        EngineCore engine = engine(d, 1000, "fcfs");
        EngineRequest r = request(1, 1000, 500);
        engine.submit(r);
        drain(engine, 0);
        assertEquals(24, r.outputTokens());
        assertEquals(FinishReason.LENGTH, r.finishReason());
    }

    @Test
    void stopsAtEosButNotBeforeMinTokens() {
        EngineCore engine = engine(h100Llama8b().build(), 1000, "fcfs");
        EngineRequest eos = new EngineRequest(1, 10, null, 100, 0, 7, 0, 0);
        EngineRequest min = new EngineRequest(2, 10, null, 100, 20, 7, 0, 0);
        engine.submit(eos);
        engine.submit(min);
        drain(engine, 0);
        assertEquals(7, eos.outputTokens());
        assertEquals(FinishReason.STOP, eos.finishReason());
        assertEquals(20, min.outputTokens());
        assertEquals(FinishReason.STOP, min.finishReason());
    }

    @Test
    void emitsOneTokenPerRunningRequestPerDecodeStep() {
        EngineCore engine = engine(h100Llama8b().build(), 1000, "fcfs");
        EngineRequest a = request(1, 100, 5);
        EngineRequest b = request(2, 100, 5);
        engine.submit(a);
        engine.submit(b);
        Map<EngineRequest, List<Long>> times = new IdentityHashMap<>();
        long now = 0;
        for (StepPlan p = engine.planStep(now); p != null; p = engine.planStep(now)) {
            now = p.endNanos();
            StepOutcome out = engine.completeStep(p);
            for (int i = 0; i < out.tokenCount(); i++) {
                times.computeIfAbsent(out.tokenRequest(i), k -> new ArrayList<>()).add(out.endNanos());
            }
        }
        assertEquals(times.get(a), times.get(b), "both sequences run in the same steps");
        assertEquals(5, times.get(a).size());
        assertEquals(a.firstTokenNanos(), times.get(a).get(0).longValue());
        assertTrue(engine.isIdle());
        assertEquals(0, engine.kvCache().usedBlocks());
    }

    @Test
    void abortFreesBlocksAndSkipsTheStepInFlight() {
        EngineCore engine = engine(h100Llama8b().build(), 1000, "fcfs");
        EngineRequest r = request(1, 100, 50);
        engine.submit(r);
        StepPlan plan = engine.planStep(0);
        assertTrue(engine.kvCache().usedBlocks() > 0);
        assertTrue(engine.abort(r, FinishReason.ABORT, 10));
        assertEquals(0, engine.kvCache().usedBlocks());
        StepOutcome out = engine.completeStep(plan);
        assertEquals(0, out.tokenCount());
        assertEquals(FinishReason.ABORT, r.finishReason());
        assertFalse(engine.abort(r, FinishReason.ABORT, 20), "aborting twice does nothing");
        assertNull(engine.planStep(plan.endNanos()));
    }

    @Test
    void admissionStopsAtMaxNumSeqs() {
        EngineCore engine = engine(h100Llama8b().maxNumSeqs(4).maxNumBatchedTokens(4096).build(), 1000, "fcfs");
        for (int i = 0; i < 10; i++) {
            engine.submit(request(i, 10, 10));
        }
        StepPlan plan = engine.planStep(0);
        assertEquals(4, plan.size());
        assertEquals(4, plan.admittedCount());
        assertEquals(6, engine.waitingCount());
    }
}
