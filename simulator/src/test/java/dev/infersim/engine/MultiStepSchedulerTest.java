package dev.infersim.engine;

import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import static dev.infersim.engine.EngineFixtures.engine;
import static dev.infersim.engine.EngineFixtures.h100Llama8b;
import static dev.infersim.engine.EngineFixtures.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** vLLM V0's multi-step rounds, by hand: what runs in a round, what it costs, when its tokens come. */
class MultiStepSchedulerTest {
    private static final Deployment V0 = h100Llama8b().maxNumSeqs(8).engine(EngineVersion.VLLM_V0).build();
    private static final Deployment ROUNDS = V0.toBuilder().numSchedulerSteps(4).build();
    private static final RooflineCostModel GPU = new RooflineCostModel(V0);
    private static final HostTime HOST = EngineVersion.VLLM_V0.hostTime();

    @Test
    void aPrefillRunsAloneThenDecodesRunInRoundsWhoseTokensComeAtTheirEnd() {
        EngineCore engine = engine(ROUNDS, 1000, "fcfs");
        EngineRequest r = request(0, 100, 6);
        engine.submit(r);

        StepPlan prefill = engine.planStep(0);
        assertEquals(1, prefill.gpuSteps(), "a prefill has no lookahead slots: a round of one");
        StepOutcome first = engine.completeStep(prefill);
        assertEquals(1, first.tokenCount());
        assertEquals(prefill.endNanos(), r.firstTokenNanos());

        StepPlan round = engine.planStep(prefill.endNanos());
        assertEquals(4, round.gpuSteps());
        assertEquals(4 * GPU.stepNanos(round.shape()) + HOST.hostNanos(0, 4), round.durationNanos(),
                "four passes of the GPU, scheduled once");
        long roundEnd = round.endNanos();
        StepOutcome out = engine.completeStep(round);
        assertEquals(4, out.tokenCount(), "the round's four tokens");
        for (int i = 0; i < out.tokenCount(); i++) {
            assertEquals(r, out.tokenRequest(i));
        }
        assertEquals(5, r.outputTokens());
        assertEquals(roundEnd, out.endNanos());

        StepPlan last = engine.planStep(roundEnd);
        assertEquals(4, last.gpuSteps(), "the round runs its four passes though one token is left");
        long lastEnd = last.endNanos();
        StepOutcome end = engine.completeStep(last);
        assertEquals(1, end.tokenCount());
        assertEquals(1, end.finishedCount());
        assertEquals(6, r.outputTokens(), "the lookahead passes past the end are dropped");
        assertEquals(lastEnd, r.finishedNanos(), "finished when the round's outputs are processed");
        assertNull(engine.planStep(lastEnd));
        assertEquals(0, engine.kvCache().usedBlocks());
        assertEquals(9, engine.steps(), "forward passes: 1 + 4 + 4");
    }

    @Test
    void aRequestArrivingInARoundWaitsForItsEnd() {
        EngineCore engine = engine(ROUNDS, 1000, "fcfs");
        engine.submit(request(0, 100, 20));
        StepPlan prefill = engine.planStep(0);
        engine.completeStep(prefill);
        StepPlan round = engine.planStep(prefill.endNanos());
        EngineRequest late = new EngineRequest(1, 100, null, 20, 0, EngineRequest.NO_EOS, 0, prefill.endNanos() + 1);
        engine.submit(late); // arrives while the round runs: the engine is not scheduled again before its end
        long roundEnd = round.endNanos();
        assertEquals(4, round.gpuSteps());
        engine.completeStep(round);
        StepPlan next = engine.planStep(roundEnd); // the engine's one plan, reused
        assertEquals(1, next.admittedCount());
        assertEquals(roundEnd, late.firstScheduledNanos());
        assertEquals(1, next.gpuSteps(), "the step that prefills it runs alone, the running decode with it");
        assertEquals(2, next.size());
    }

    @Test
    void oneStepIsTodaysEngineAndRoundsAreV0s() {
        EngineCore single = engine(V0, 1000, "fcfs");
        single.submit(request(0, 100, 3));
        single.completeStep(single.planStep(0));
        assertEquals(1, single.planStep(1).gpuSteps());
        ConfigException e = assertThrows(ConfigException.class,
                () -> h100Llama8b().numSchedulerSteps(10).build());
        assertTrue(e.getMessage().startsWith("--num-scheduler-steps 10 is multi-step scheduling"), e.getMessage());
        assertThrows(ConfigException.class, () -> V0.toBuilder().numSchedulerSteps(0).build());
    }
}
