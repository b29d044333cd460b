package dev.infersim.sim;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.KvTransferLink;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.function.DoubleFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DistServe's direction (OSDI 2024, section 6): with tight TTFT and TPOT objectives, splitting wins on long prompts and
 * loses on short ones. Objectives are multiples of the latencies of the workload's request served alone, as DistServe
 * scales them, so they stay equally tight whatever the profile's speed.
 */
class DisaggregationPlannerTest {
    private static final Deployment D = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b"))
            .enablePrefixCaching(false).build();

    /** TTFT within 4x and TPOT within 1.5x of a request of these lengths served alone. */
    private static SimulationOptions tight(int input, int output) {
        return scaled(input, output, 4, 1.5);
    }

    private static SimulationOptions scaled(int input, int output, double ttftScale, double tpotScale) {
        return SimulationOptions.defaults().withSlo(SingleRequestLatency.of(EngineCore.create(D), input, output)
                .scaled(ttftScale, tpotScale));
    }

    private static DisaggregationPlanner planner(int replicas, SimulationOptions options) {
        return new DisaggregationPlanner(replicas, () -> EngineCore.create(D), RoundRobinRouter::new, RoundRobinRouter::new,
                LeastOutstandingRequestsRouter::new, KvTransferLink.DEFAULT, options, 0.9);
    }

    /** Requests at a rate, as many as keep the run as long as {@code n} requests at {@code rate0}. */
    private static DoubleFunction<Workload> workload(int input, int output, double rate0, int n) {
        return r -> Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(input).randomOutputLen(output)
                .randomRangeRatio(0.2).requestRate(r).numPrompts(Math.max(n, Math.round(n * r / rate0))).seed(5).build());
    }

    @Test
    void longPromptsUnderTightObjectivesAreServedBestSplit() {
        List<DisaggregationPlanner.Outcome> plan = planner(4, tight(4000, 200)).plan(6, workload(4000, 200, 6, 300));

        assertEquals(List.of("4 aggregated", "1P:3D", "2P:2D", "3P:1D"), plan.stream().map(o -> o.split().toString()).toList());
        DisaggregationPlanner.Outcome best = DisaggregationPlanner.best(plan);
        assertTrue(!best.split().aggregated() && best.goodputRate() > 1.2 * plan.get(0).goodputRate(),
                "best " + best.split() + " at " + best.goodputRate() + " req/s vs aggregated " + plan.get(0).goodputRate());
    }

    /** The aggregated engine's interference, decodes sharing steps with prefill chunks, now fits within the objectives. */
    @Test
    void longPromptsUnderLooseObjectivesAreServedBestAggregated() {
        List<DisaggregationPlanner.Outcome> plan = planner(4, scaled(4000, 200, 20, 8)).plan(6, workload(4000, 200, 6, 300));

        DisaggregationPlanner.Outcome best = DisaggregationPlanner.best(plan);
        assertTrue(best.split().aggregated(), "best " + best.split() + " at " + best.goodputRate() + " req/s");
    }

    @Test
    void shortPromptsAreServedBestAggregated() {
        List<DisaggregationPlanner.Outcome> plan = planner(2, tight(256, 200)).plan(20, workload(256, 200, 20, 500));

        DisaggregationPlanner.Outcome best = DisaggregationPlanner.best(plan);
        assertTrue(best.split().aggregated(), "best " + best.split());
        assertTrue(plan.get(1).goodputRate() < 0.95 * best.goodputRate(), plan.get(1).goodputRate() + " vs " + best.goodputRate());
    }

    @Test
    void theGoodputRateFoundMeetsTheTarget() {
        SimulationOptions tight = tight(2000, 100);
        DisaggregationPlanner.Outcome o = planner(2, tight).plan(3, workload(2000, 100, 3, 200)).get(1);
        DoubleFunction<Workload> at = workload(2000, 100, 3, 200);
        DisaggregatedFleet pd = new DisaggregatedFleet(new Replica[] {new Replica(0, EngineCore.create(D))},
                new RoundRobinRouter(), new Replica[] {new Replica(1, EngineCore.create(D))},
                new LeastOutstandingRequestsRouter(), KvTransferLink.DEFAULT);
        SimulationResult r = new Simulation(pd, tight, null).run(at.apply(o.goodputRate()));
        assertTrue(r.stats().goodRequests() >= 0.9 * r.stats().completed(), r.stats().goodRequests() + " good");
        assertTrue(o.runs() > 3);
    }

    @Test
    void aPlanNeedsAnObjectiveAndTwoReplicas() {
        assertThrows(ConfigException.class, () -> planner(2, SimulationOptions.defaults()));
        assertThrows(ConfigException.class, () -> planner(1, tight(256, 200)));
    }
}
