package dev.infersim.engine;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static dev.infersim.engine.EngineFixtures.drain;
import static dev.infersim.engine.EngineFixtures.engine;
import static dev.infersim.engine.EngineFixtures.h100Llama8b;
import static dev.infersim.engine.EngineFixtures.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PrefixCacheTest {

    private static int[] prompt(int[] prefix, int suffixLen, long seed) {
        int[] ids = new int[prefix.length + suffixLen];
        System.arraycopy(prefix, 0, ids, 0, prefix.length);
        SplittableRandom rng = new SplittableRandom(seed);
        for (int i = prefix.length; i < ids.length; i++) {
            ids[i] = rng.nextInt(100_000);
        }
        return ids;
    }

    @Test
    void reusesSharedPrefixBlocksOfFinishedRequests() {
        EngineCore engine = engine(h100Llama8b().build(), 1000, "fcfs");
        int[] prefix = new SplittableRandom(7).ints(512, 0, 100_000).toArray();
        EngineRequest cold = request(1, prompt(prefix, 100, 1), 10);
        engine.submit(cold);
        long now = drain(engine, 0);
        EngineRequest warm = request(2, prompt(prefix, 100, 2), 10);
        engine.submit(warm);
        drain(engine, now);
        assertEquals(0, cold.cachedPromptTokens());
        assertEquals(512, warm.cachedPromptTokens(), "the 32 full prefix blocks are hits");
        assertEquals(1224, engine.kvCache().queriedTokens());
        assertEquals(512, engine.kvCache().hitTokens());
        long coldTtft = cold.firstTokenNanos() - cold.firstScheduledNanos();
        long warmTtft = warm.firstTokenNanos() - warm.firstScheduledNanos();
        assertTrue(warmTtft < coldTtft / 2, "warm prefill " + warmTtft + " ns vs cold " + coldTtft + " ns");
    }

    @Test
    void storedBlocksCarryVllmsHashChainAndComeOnePerRunWithTheirParent() {
        EngineCore engine = engine(h100Llama8b().prefixCachingHashAlgo(PrefixCachingHashAlgo.SHA256_CBOR).hashSeed("0")
                .build(), 1000, "fcfs");
        java.util.List<long[]> runs = new java.util.ArrayList<>(); // {first, count, parent, hashes...}
        engine.kvCache().setEventListener(new KvEventListener() {
            @Override
            public void blockStored(long[] hashes, int first, int count, long parentHash, int[] tokenIds, int blockSize,
                                    LoraAdapter lora) {
                long[] run = new long[3 + count];
                run[0] = first;
                run[1] = count;
                run[2] = parentHash;
                System.arraycopy(hashes, first, run, 3, count);
                runs.add(run);
            }
            @Override public void blockRemoved(long hash) { }
            @Override public void allBlocksCleared() { }
        });
        int[] prefix = new SplittableRandom(9).ints(64, 0, 100_000).toArray();
        int[] a = prompt(prefix, 40, 1);
        engine.submit(request(1, a, 4));
        long now = drain(engine, 0);
        engine.submit(request(2, prompt(prefix, 40, 2), 4));
        drain(engine, now);

        BlockHasher hasher = new BlockHasher(PrefixCachingHashAlgo.SHA256_CBOR, "0");
        long[] expected = new long[6];
        byte[] parent = null;
        for (int i = 0; i < 6; i++) {
            byte[] h = new byte[32];
            hasher.hash(parent, 0, a, 16 * i, 16, null, h, 0);
            expected[i] = BlockHasher.low64(h, 0, 32);
            parent = h;
        }
        assertEquals(2, runs.size());
        assertEquals(java.util.List.of(0L, 6L, 0L), java.util.List.of(runs.get(0)[0], runs.get(0)[1], runs.get(0)[2]),
                "the first request stores its 6 full blocks (104 tokens), the first with no parent");
        assertEquals(java.util.Arrays.toString(expected), java.util.Arrays.toString(java.util.Arrays.copyOfRange(runs.get(0), 3, 9)));
        assertEquals(java.util.List.of(4L, 2L, expected[3]), java.util.List.of(runs.get(1)[0], runs.get(1)[1], runs.get(1)[2]),
                "the second finds the 4 prefix blocks cached and stores blocks 4 and 5, the parent being block 3's hash");
    }

    @Test
    void sharesBlocksBetweenConcurrentRequestsWithTheSamePrefix() {
        EngineCore engine = engine(h100Llama8b().build(), 1000, "fcfs");
        int[] prefix = new SplittableRandom(3).ints(160, 0, 100_000).toArray();
        EngineRequest first = request(1, prompt(prefix, 40, 1), 50);
        engine.submit(first);
        StepPlan p = engine.planStep(0);
        engine.completeStep(p);
        EngineRequest second = request(2, prompt(prefix, 40, 2), 50);
        engine.submit(second);
        p = engine.planStep(p.endNanos());
        engine.completeStep(p);
        assertEquals(160, second.cachedPromptTokens());
        for (int i = 0; i < 10; i++) {
            assertEquals(first.blocks[i], second.blocks[i], "prefix block " + i + " is shared");
            assertEquals(2, engine.kvCache().referenceCount(first.blocks[i]));
        }
    }

    @Test
    void alwaysComputesTheLastPromptToken() {
        EngineCore engine = engine(h100Llama8b().build(), 1000, "fcfs");
        int[] ids = new SplittableRandom(5).ints(64, 0, 100_000).toArray();
        EngineRequest a = request(1, ids, 3);
        engine.submit(a);
        long now = drain(engine, 0);
        EngineRequest b = request(2, ids.clone(), 3);
        engine.submit(b);
        drain(engine, now);
        assertEquals(48, b.cachedPromptTokens(), "4 full blocks cached but the last is recomputed to sample");
    }

    @Test
    void evictsLeastRecentlyUsedCachedBlocksFirst() {
        EngineCore engine = engine(h100Llama8b().build(), 8, "fcfs"); // 128 tokens
        int[] oldPrefix = new SplittableRandom(1).ints(48, 0, 100_000).toArray();
        int[] newPrefix = new SplittableRandom(2).ints(48, 0, 100_000).toArray();
        long now = drain(submit(engine, request(1, prompt(oldPrefix, 1, 1), 1)), 0);
        now = drain(submit(engine, request(2, prompt(newPrefix, 1, 2), 1)), now);
        // a 79-token prompt needs 5 blocks: the 2 never-cached ones, then the 3 least recently used cached ones
        now = drain(submit(engine, request(3, new SplittableRandom(9).ints(79, 0, 100_000).toArray(), 1)), now);
        EngineRequest newAgain = request(4, prompt(newPrefix, 1, 3), 1);
        EngineRequest oldAgain = request(5, prompt(oldPrefix, 1, 4), 1);
        drain(submit(engine, newAgain), now);
        assertEquals(48, newAgain.cachedPromptTokens(), "recently used prefix survived");
        drain(submit(engine, oldAgain), newAgain.finishedNanos());
        assertEquals(0, oldAgain.cachedPromptTokens(), "older prefix was evicted first");
    }

    private static EngineCore submit(EngineCore engine, EngineRequest r) {
        engine.submit(r);
        return engine;
    }

    @Test
    void hashIndexSurvivesRandomInsertAndRemove() {
        BlockHashIndex index = new BlockHashIndex(4);
        java.util.HashMap<Long, Integer> reference = new java.util.HashMap<>();
        SplittableRandom rng = new SplittableRandom(11);
        for (int i = 0; i < 100_000; i++) {
            long key = 1 + rng.nextInt(2000);
            if (rng.nextBoolean()) {
                index.put(key, i);
                reference.put(key, i);
            } else {
                index.remove(key);
                reference.remove(key);
            }
        }
        assertEquals(reference.size(), index.size());
        for (long key = 1; key <= 2000; key++) {
            assertEquals(reference.getOrDefault(key, -1).intValue(), index.get(key), "key " + key);
        }
    }

    @Test
    void resetForgetsEveryCachedBlockOnlyWhenNoRequestHoldsOneOrRunningOnesArePreemptedFirst() {
        EngineCore engine = engine(h100Llama8b().build(), 1000, "fcfs");
        int[] cleared = {0};
        engine.kvCache().setEventListener(new KvEventListener() {
            @Override public void blockStored(long[] hashes, int first, int count, long parentHash, int[] tokenIds, int blockSize,
                                    LoraAdapter lora) { }
            @Override public void blockRemoved(long hash) { }
            @Override public void allBlocksCleared() { cleared[0]++; }
        });
        int[] prefix = new SplittableRandom(5).ints(512, 0, 100_000).toArray();
        engine.submit(request(1, prompt(prefix, 100, 1), 10));
        long now = drain(engine, 0);
        assertEquals(38, engine.kvCache().cachedBlocks(), "612 prompt tokens: 38 full blocks");

        EngineRequest running = request(2, prompt(prefix, 100, 2), 10);
        engine.submit(running);
        StepPlan step = engine.planStep(now);
        engine.completeStep(step);
        java.util.List<EngineRequest> preempted = new java.util.ArrayList<>();
        assertFalse(engine.resetPrefixCache(false, preempted::add), "a running request holds blocks");
        assertEquals(0, cleared[0]);
        assertTrue(engine.resetPrefixCache(true, preempted::add));
        assertEquals(java.util.List.of(running), preempted);
        assertEquals(1, running.preemptions());
        assertEquals(0, engine.kvCache().cachedBlocks());
        assertEquals(0, engine.kvCache().usedBlocks());
        assertEquals(1, cleared[0]);

        drain(engine, step.endNanos());
        assertEquals(10, running.outputTokens(), "the preempted request recomputes and finishes");
        EngineRequest after = request(3, prompt(prefix, 100, 3), 10);
        engine.submit(after);
        drain(engine, step.endNanos() + 1_000_000_000L);
        assertEquals(512, after.cachedPromptTokens(), "the recomputed request stored the prefix again");
    }

    /** What the fixed-latency engine's early start weighs: an admission's blocks, cached ones revived from the free queue included. */
    @Test
    void anAdmissionTakesItsFreshBlocksPlusTheCachedBlocksItRevivesFromTheFreeQueue() {
        KvCacheManager kv = new KvCacheManager(8, 16, true);
        int[] prefix = new SplittableRandom(3).ints(64, 0, 100_000).toArray();
        EngineRequest first = admissible(request(1, prefix, 4));
        assertEquals(4, kv.admit(first, 0, 64), "64 tokens, 4 fresh blocks");
        first.computedTokens = 64;
        kv.cacheComputedBlocks(first);
        kv.free(first);
        assertEquals(8, kv.freeBlocks(), "its cached blocks are free again, still findable");

        EngineRequest revives = admissible(request(2, prompt(prefix, 16, 2), 4));
        int cached = kv.findCachedBlocks(revives);
        assertEquals(4, cached);
        assertEquals(5, kv.admit(revives, cached, 16), "1 fresh block and the 4 cached ones taken off the free queue");
        EngineRequest shares = admissible(request(3, prompt(prefix, 16, 3), 4));
        assertEquals(1, kv.admit(shares, kv.findCachedBlocks(shares), 16), "blocks another request holds cost nothing");
        EngineRequest tooBig = admissible(request(4, new SplittableRandom(4).ints(48, 0, 100_000).toArray(), 4));
        assertEquals(-1, kv.admit(tooBig, 0, 48), "3 blocks do not fit in 2");
        assertEquals(2, kv.freeBlocks(), "a refused admission changes nothing");
    }

    private static EngineRequest admissible(EngineRequest r) {
        r.outputLimit = r.maxTokens(); // as EngineCore.submit sets it
        return r;
    }
}
