package dev.infersim.engine;

import dev.infersim.engine.profile.Precision;
import dev.infersim.engine.profile.GpuProfile;
import dev.infersim.engine.profile.ModelProfile;
import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static dev.infersim.engine.EngineFixtures.drain;
import static dev.infersim.engine.EngineFixtures.engine;
import static dev.infersim.engine.EngineFixtures.h100Llama8b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoraTest {
    private static final LoraAdapter A = new LoraAdapter(1, "sql-lora");
    private static final LoraAdapter B = new LoraAdapter(2, "chat-lora");
    private static final LoraAdapter C = new LoraAdapter(3, "code-lora");

    private static EngineCore loraEngine(int maxLoras, int maxCpuLoras) {
        return engine(h100Llama8b().lora(LoraConfig.of(maxLoras, 16, maxCpuLoras)).build(), 1000, "fcfs");
    }

    private static EngineRequest on(LoraAdapter a, long id, int prompt, int output) {
        return new EngineRequest(id, prompt, null, output, 0, EngineRequest.NO_EOS, 0, 0, a);
    }

    @Test
    void aStepRunsAtMostMaxLorasAdaptersAndASkippedRequestBlocksNoneBehindIt() {
        EngineCore engine = loraEngine(1, 0);
        EngineRequest first = on(A, 1, 100, 5);
        EngineRequest other = on(B, 2, 100, 5);
        EngineRequest sameAdapter = on(A, 3, 100, 5);
        EngineRequest base = on(null, 4, 100, 5);
        List.of(first, other, sameAdapter, base).forEach(engine::submit);

        StepPlan plan = engine.planStep(0);
        List<EngineRequest> batch = batch(plan);
        assertEquals(List.of(first, sameAdapter, base), batch, "the request on a second adapter is skipped, not blocking");
        assertTrue(other.isWaiting());
        long now = plan.endNanos();
        engine.completeStep(plan);
        while (!first.isFinished() || !sameAdapter.isFinished()) {
            plan = engine.planStep(now);
            assertFalse(batch(plan).contains(other), "admitted while another adapter runs");
            now = plan.endNanos();
            engine.completeStep(plan);
        }
        plan = engine.planStep(now);
        assertTrue(batch(plan).contains(other), "admitted once its adapter is the only one");
        engine.completeStep(plan);
        assertEquals(now, other.firstScheduledNanos());
    }

    @Test
    void skippedRequestsKeepTheirPlaceAtTheHeadOfTheQueue() {
        EngineCore engine = loraEngine(1, 0);
        EngineRequest running = on(A, 1, 100, 3);
        EngineRequest b1 = on(B, 2, 100, 3);
        EngineRequest c = on(C, 3, 100, 3);
        EngineRequest b2 = on(B, 4, 100, 3);
        List.of(running, b1, c, b2).forEach(engine::submit);
        long now = drainUntilFinished(engine, running, 0);
        StepPlan plan = engine.planStep(now);
        assertEquals(List.of(b1, b2), batch(plan), "the oldest skipped request's adapter goes next, with its peers");
        engine.completeStep(plan);
    }

    @Test
    void anAdapterLoadIsPaidOnceAndThenTheAdapterStaysResident() {
        EngineCore engine = loraEngine(1, 0);
        LoraConfig config = engine.deployment().lora();
        ModelProfile model = engine.deployment().model();
        engine.submit(on(A, 1, 100, 4));
        StepPlan plan = engine.planStep(0);
        long load = config.storageReadNanos(model) + config.hostCopyNanos(model, 1);
        assertEquals(load, plan.loraLoadNanos());
        assertTrue(plan.durationNanos() > load);
        long now = plan.endNanos();
        engine.completeStep(plan);
        now = drainLoads(engine, now, 0);
        engine.submit(onAt(A, 2, now));
        drainLoads(engine, now, 0);
        assertEquals(1, engine.loraLoads());
        assertTrue(engine.isLoraOnGpu(A.id()));
    }

    @Test
    void gpuSlotsAndTheHostCacheEvictTheLeastRecentlyUsedAdapter() {
        EngineCore engine = loraEngine(1, 2);
        LoraConfig config = engine.deployment().lora();
        ModelProfile model = engine.deployment().model();
        long host = config.hostCopyNanos(model, 1);
        long cold = config.storageReadNanos(model) + host;
        long now = 0;
        // GPU holds one adapter, host memory two: A cold, B cold (A to host), A from host, C cold (B out), B cold
        long[] expected = {cold, cold, host, cold, cold};
        LoraAdapter[] order = {A, B, A, C, B};
        for (int i = 0; i < order.length; i++) {
            engine.submit(onAt(order[i], i, now));
            StepPlan plan = engine.planStep(now);
            assertEquals(expected[i], plan.loraLoadNanos(), "load of request " + i + " on " + order[i].name());
            now = plan.endNanos();
            engine.completeStep(plan);
            now = drainLoads(engine, now, 0);
        }
        assertEquals(5, engine.loraLoads());
    }

    @Test
    void aRegisteredAdapterIsInHostMemorySoItsFirstStepPaysOnlyTheCopy() {
        EngineCore engine = loraEngine(1, 2);
        LoraConfig config = engine.deployment().lora();
        engine.registerLora(A.id());
        engine.registerLora(B.id());
        assertFalse(engine.isLoraOnGpu(A.id()));
        engine.submit(on(A, 1, 100, 2));
        StepPlan plan = engine.planStep(0);
        assertEquals(config.hostCopyNanos(engine.deployment().model(), 1), plan.loraLoadNanos());
        engine.completeStep(plan);
    }

    @Test
    void unloadingAnAdapterFreesItsSlot() {
        EngineCore engine = loraEngine(1, 1);
        engine.submit(on(A, 1, 100, 2));
        drain(engine, 0);
        assertTrue(engine.isLoraOnGpu(A.id()));
        engine.removeLora(A.id());
        assertFalse(engine.isLoraOnGpu(A.id()));
    }

    @Test
    void loraAddsItsMatmulCostPerTokenAsARoofline() {
        Deployment d = h100Llama8b().lora(LoraConfig.of(4, 16, 0)).build();
        RooflineCostModel cost = new RooflineCostModel(d);
        GpuProfile g = d.gpu();
        ModelProfile m = d.model();
        int tokens = 8192;
        BatchShape base = new BatchShape().addPrefill(tokens, 0, true);
        BatchShape lora = new BatchShape().addPrefill(tokens, 0, true).addLoraTokens(tokens).loraAdapters(1);
        // per layer: 2 x tokens x rank x sum(d_in + d_out) FLOPs against the adapter's weights plus each token's
        // projection inputs and outputs, moved through HBM; at 8192 tokens the activations dominate
        double flops = 2.0 * tokens * m.loraParamsPerLayer(16);
        double efficiency = g.computeEfficiencyMax() * tokens / (tokens + g.computeHalfTokens());
        double bytes = 2.0 * m.loraParamsPerLayer(16) + 2.0 * tokens * (m.loraInputsPerLayer() + m.loraOutputsPerLayer());
        double bandwidth = g.hbmBytesPerSecond() * g.gemmBandwidthEfficiency();
        double expected = m.layers() * Math.max(flops / (g.peakFlops(Precision.BF16) * efficiency), bytes / bandwidth);
        assertEquals(expected * 1e9, cost.stepNanos(lora) - cost.stepNanos(base), 2);
        assertTrue(expected < 0.1 * cost.stepNanos(base) / 1e9, "LoRA adds under a tenth to a long prefill");
        assertEquals(81_920L * 16, m.loraParamsPerLayer(16), "q, k, v, o, gate, up, down of Llama-3.1-8B");

        // memory-bound at a few decode tokens: each distinct adapter's weights are read once per step
        BatchShape one = decodes(4).addLoraTokens(4).loraAdapters(1);
        BatchShape four = decodes(4).addLoraTokens(4).loraAdapters(4);
        double adapterRead = m.layers() * m.loraParamsPerLayer(16) * 2.0 / (g.hbmBytesPerSecond() * g.gemmBandwidthEfficiency());
        assertEquals(3 * adapterRead * 1e9, cost.stepNanos(four) - cost.stepNanos(one), 2);
        assertTrue(cost.stepNanos(one) > cost.stepNanos(decodes(4)));
    }

    @Test
    void adaptersNeverShareCachedPrefixBlocksAndEventsNameTheAdapter() {
        EngineCore engine = engine(h100Llama8b().lora(LoraConfig.of(2, 16, 0)).build(), 1000, "fcfs");
        List<String> stored = new ArrayList<>();
        engine.kvCache().setEventListener(new KvEventListener() {
            @Override
            public void blockStored(long[] hashes, int first, int count, long parentHash, int[] tokenIds, int blockSize,
                                    LoraAdapter lora) {
                stored.add((lora == null ? "base" : lora.name()) + " x" + count);
            }

            @Override
            public void blockRemoved(long hash) {
            }

            @Override
            public void allBlocksCleared() {
            }
        });
        int[] prompt = IntStream.range(0, 64).toArray();
        EngineRequest first = new EngineRequest(1, 64, prompt, 2, 0, EngineRequest.NO_EOS, 0, 0, A);
        engine.submit(first);
        long now = drain(engine, 0);
        EngineRequest otherAdapter = new EngineRequest(2, 64, prompt, 2, 0, EngineRequest.NO_EOS, 0, now, B);
        EngineRequest base = new EngineRequest(3, 64, prompt, 2, 0, EngineRequest.NO_EOS, 0, now, null);
        EngineRequest sameAdapter = new EngineRequest(4, 64, prompt, 2, 0, EngineRequest.NO_EOS, 0, now, A);
        List.of(otherAdapter, base, sameAdapter).forEach(engine::submit);
        drain(engine, now);
        assertEquals(0, otherAdapter.cachedPromptTokens());
        assertEquals(0, base.cachedPromptTokens());
        assertEquals(48, sameAdapter.cachedPromptTokens(), "three of four blocks: the last prompt token is always computed");
        assertEquals(List.of("sql-lora x4", "chat-lora x4", "base x4"), stored, "one event per request's run of blocks");
    }

    @Test
    void fixedTimingAppliesTheSameAdapterLimit() {
        Deployment d = h100Llama8b().lora(LoraConfig.of(1, 16, 0)).build();
        EngineCore engine = EngineCore.fixed(d, KvCapacity.of(d), SchedulingPolicies.byName("fcfs"),
                new FixedTiming(10, 0, 5, 0, 0, 1), 7);
        EngineRequest a = on(A, 1, 10, 3);
        EngineRequest b = on(B, 2, 10, 3);
        EngineRequest a2 = on(A, 3, 10, 3);
        List.of(a, b, a2).forEach(engine::submit);
        engine.completeStep(engine.planStep(0));
        assertTrue(a.isRunning() && a2.isRunning());
        assertTrue(b.isWaiting());
        drain(engine, 0);
        assertTrue(b.firstScheduledNanos() >= Math.max(a.finishedNanos(), a2.finishedNanos()));
    }

    @Test
    void aRequestOnAnAdapterNeedsLoraEnabled() {
        EngineCore engine = engine(h100Llama8b().build(), 100, "fcfs");
        assertThrows(IllegalArgumentException.class, () -> engine.submit(on(A, 1, 10, 1)));
        assertThrows(ConfigException.class, () -> LoraConfig.of(2, 16, 1));
        assertThrows(ConfigException.class, () -> LoraConfig.of(1, 12, 0));
    }

    private static BatchShape decodes(int n) {
        BatchShape s = new BatchShape();
        for (int i = 0; i < n; i++) {
            s.addDecode(500);
        }
        return s;
    }

    private static EngineRequest onAt(LoraAdapter a, long id, long arrival) {
        return new EngineRequest(id, 100, null, 2, 0, EngineRequest.NO_EOS, 0, arrival, a);
    }

    private static List<EngineRequest> batch(StepPlan plan) {
        List<EngineRequest> batch = new ArrayList<>();
        for (int i = 0; i < plan.size(); i++) {
            batch.add(plan.request(i));
        }
        return batch;
    }

    private static long drainUntilFinished(EngineCore engine, EngineRequest r, long now) {
        while (!r.isFinished()) {
            StepPlan plan = engine.planStep(now);
            now = plan.endNanos();
            engine.completeStep(plan);
        }
        return now;
    }

    /** Drains the engine, checking every step's adapter load time is {@code expected}. */
    private static long drainLoads(EngineCore engine, long now, long expected) {
        for (StepPlan p = engine.planStep(now); p != null; p = engine.planStep(now)) {
            assertEquals(expected, p.loraLoadNanos());
            now = p.endNanos();
            engine.completeStep(p);
        }
        return now;
    }
}
