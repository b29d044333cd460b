package dev.infersim.engine;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.infersim.engine.EngineFixtures.engine;
import static dev.infersim.engine.EngineFixtures.h100Llama8b;
import static dev.infersim.engine.EngineFixtures.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A small case worked out by hand from vLLM V1's Scheduler.schedule and _preempt_request (EngineCore's javadoc cites
 * them): 9 blocks of 16 tokens, a budget of 64 tokens, prefix caching on; A and B arrive together, 40 prompt tokens and
 * 30 output tokens each, 5 blocks each at the end, 10 in all.
 * <pre>
 * step 1   waiting: A takes 40 tokens (3 blocks), B the 24 the budget leaves (2 blocks)        free 4
 * step 2   running: A decodes (41 tokens in 3 blocks), B its last 16 prompt tokens (3 blocks)  free 3
 * step 10  A's 49th token needs a 4th block                                                  free 2
 * step 11  B's 49th token needs a 4th block                                                  free 1
 * step 26  A's 65th token needs a 5th block                                                  free 0
 * step 27  B's 65th token finds no block: running.pop() is B itself -> B is preempted, its 64
 *          computed tokens (prompt and 24 outputs, 4 full blocks) stay cached; no admission   free 4
 * step 28-30  B at the head of the waiting queue finds its 4 blocks cached but needs a 5th for its
 *          65th token: 4 + 1 > 4 free, it waits; A finishes at step 30 (30 outputs)
 * step 31  B resumes: 64 tokens from the cache, computes 1, samples its 26th output
 * step 35  B's 30th output; both done, one preemption, 1 token recomputed (not 65)
 * </pre>
 */
class PreemptionTest {

    @Test
    void followsVllmV1StepByStepOnAHandWorkedCase() {
        Deployment d = h100Llama8b().maxNumSeqs(4).maxNumBatchedTokens(64).blockSize(16).build();
        EngineCore engine = engine(d, 9, "fcfs");
        EngineRequest a = request(1, 40, 30);
        EngineRequest b = request(2, 40, 30);
        engine.submit(a);
        engine.submit(b);
        List<int[]> free = new ArrayList<>();
        long now = 0;
        int step = 0;
        int preemptedAt = -1;
        int resumedAt = -1;
        int resumedFrom = -1;
        for (StepPlan p = engine.planStep(now); p != null; p = engine.planStep(now)) {
            step++;
            if (p.preemptedCount() > 0) {
                assertEquals(-1, preemptedAt, "one preemption");
                assertSame(b, p.preempted(0), "running.pop() under FCFS: the last admitted, B");
                preemptedAt = step;
                assertEquals(1, p.size(), "B preempted itself: only A runs, and nothing is admitted");
                assertSame(a, p.request(0));
            }
            if (preemptedAt > 0 && resumedAt < 0 && b.isRunning()) {
                resumedAt = step;
                resumedFrom = b.computedTokens;
                for (int i = 0; i < p.size(); i++) {
                    if (p.request(i) == b) {
                        assertEquals(1, p.newTokens(i), "only the token after its cached 64 is computed");
                    }
                }
            }
            now = p.endNanos();
            engine.completeStep(p);
            free.add(new int[] {step, engine.kvCache().freeBlocks()});
        }
        assertEquals(27, preemptedAt, "B's 65th token is the first one no block is left for");
        assertEquals(31, resumedAt, "B resumes once A's 5 blocks are freed");
        assertEquals(64, resumedFrom, "its prompt and 24 outputs came back from the prefix cache");
        assertEquals(35, step);
        assertEquals(30, a.outputTokens());
        assertEquals(30, b.outputTokens());
        assertEquals(0, a.preemptions());
        assertEquals(1, b.preemptions());
        assertEquals(1, engine.preemptions());
        assertTrue(free.get(0)[1] == 4 && free.get(1)[1] == 3 && free.get(9)[1] == 2 && free.get(10)[1] == 1
                && free.get(25)[1] == 0, "block use as worked out");
        assertEquals(80, engine.promptTokensComputed(), "prompts computed once each: 40 + 40, none recomputed");
    }
}
