package dev.infersim.sim;

import dev.infersim.engine.BatchShape;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.engine.SchedulingPolicies;
import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** One request served alone: its prefill steps, then decode steps of a batch of one, and nothing else. */
class SingleRequestLatencyTest {
    private static final Deployment D = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();

    @Test
    void aPromptWithinTheTokenBudgetTakesOnePrefillStepThenOneDecodeStepPerToken() {
        SingleRequestLatency alone = SingleRequestLatency.of(EngineCore.create(D), 4000, 200);

        RooflineCostModel cost = new RooflineCostModel(D);
        long prefill = cost.stepNanos(new BatchShape().addPrefill(4000, 0, true));
        long decodes = 0;
        for (int context = 4000; context < 4000 + 199; context++) {
            decodes += cost.stepNanos(new BatchShape().addDecode(context));
        }
        assertEquals(prefill / 1e6, alone.ttftMs(), 1e-9);
        assertEquals((prefill + decodes) / 1e6, alone.e2elMs(), 1e-9);
        assertEquals(decodes / 1e6 / 199, alone.tpotMs(), 1e-9);
    }

    @Test
    void aPromptOverTheTokenBudgetIsPrefilledInChunks() {
        int budget = D.maxNumBatchedTokens();
        SingleRequestLatency alone = SingleRequestLatency.of(EngineCore.create(D), 2 * budget + 100, 1);

        RooflineCostModel cost = new RooflineCostModel(D);
        long chunks = cost.stepNanos(new BatchShape().addPrefill(budget, 0, false))
                + cost.stepNanos(new BatchShape().addPrefill(budget, budget, false))
                + cost.stepNanos(new BatchShape().addPrefill(100, 2 * budget, true));
        assertEquals(chunks / 1e6, alone.ttftMs(), 1e-9);
        assertEquals(alone.ttftMs(), alone.e2elMs());
        assertEquals(0, alone.tpotMs(), "one output token has no time per output token");
    }

    @Test
    void underFixedTimingItIsTheConfiguredLatencies() {
        FixedTiming timing = new FixedTiming(100, 0, 50, 0, 0.1, 3);
        EngineCore idle = EngineCore.fixed(D, KvCapacity.of(D), SchedulingPolicies.byName("fcfs"), timing, 1);

        SingleRequestLatency alone = SingleRequestLatency.of(idle, 1000, 11);

        assertEquals(new SingleRequestLatency(1000, 11, 200, 50, 700), alone);
        assertEquals(new GoodputSlo(800, 75, Double.NaN), alone.scaled(4, 1.5));
        assertEquals(new GoodputSlo(200, 50, 700), alone.asObjectives());
    }

    @Test
    void theMeanRequestHasTheWorkloadsMeanLengthsRounded() {
        Workload w = Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(1000).randomOutputLen(100)
                .randomRangeRatio(0.5).numPrompts(50).seed(3).build());
        double prompts = 0;
        double outputs = 0;
        for (WorkloadRequest r : w) {
            prompts += r.promptTokens();
            outputs += r.outputTokens();
        }

        SingleRequestLatency mean = SingleRequestLatency.ofMeanRequest(EngineCore.create(D), w);

        assertEquals(Math.round(prompts / w.size()), mean.promptTokens());
        assertEquals(Math.round(outputs / w.size()), mean.outputTokens());
        assertEquals(SingleRequestLatency.of(EngineCore.create(D), mean.promptTokens(), mean.outputTokens()), mean);
    }

    @Test
    void anEngineAlreadyServingIsRefused() {
        EngineCore busy = EngineCore.create(D);
        busy.submit(new EngineRequest(7, 100, null, 10, 10, EngineRequest.NO_EOS, 0, 0));

        assertThrows(IllegalArgumentException.class, () -> SingleRequestLatency.of(busy, 100, 10));
    }
}
