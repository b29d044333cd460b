package dev.infersim.sim;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClosedLoopAndWarmupTest {

    private static EngineCore engine() {
        return EngineCore.create(Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build());
    }

    @Test
    void closedLoopKeepsExactlyNUsersInFlight() {
        Workload workload = Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(256)
                .randomOutputLen(64).maxConcurrency(8).numPrompts(400).seed(2).build());
        SimulationResult result = Simulation.single(engine(), SimulationOptions.defaults(), null).run(workload);

        assertEquals(400, result.stats().completed());
        // vLLM's max_concurrent_requests counts requests active at any time within a second, so it exceeds 8
        assertTrue(result.stats().peaks().maxConcurrentRequests() > 8);
        Timeline t = result.timeline();
        int busy = 0;
        for (int i = 0; i < t.size(); i++) {
            assertTrue(t.running(i) + t.waiting(i) <= 8, "at most 8 requests in the engine");
            busy += t.running(i) + t.waiting(i) == 8 ? 1 : 0;
        }
        assertTrue(busy > t.size() * 0.9, "a closed loop refills its slot at once: " + busy + " of " + t.size());
        assertFalse(result.saturation().saturated(), result.saturation().reason());
        // Little's law with L = 8 users: throughput = 8 / mean E2EL
        assertEquals(8.0, result.meanRequestsInSystem(), 0.1);
        assertTrue(result.littlesLawError() < 0.01);
    }

    @Test
    void warmupRequestsAreLeftOutOfTheSummary() {
        Workload workload = Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(256)
                .randomOutputLen(32).requestRate(20).numPrompts(500).seed(4).build());
        SimulationResult all = Simulation.single(engine(), SimulationOptions.defaults(), null).run(workload);
        SimulationResult measured = Simulation.single(engine(), SimulationOptions.defaults().withWarmups(100), null)
                .run(workload);
        SimulationResult byTime = Simulation.single(engine(),
                SimulationOptions.defaults().withWarmupDurationNanos(5_000_000_000L), null).run(workload);

        assertEquals(500, all.stats().completed());
        assertEquals(400, measured.stats().completed());
        assertEquals(100, measured.unmeasuredRequests());
        assertEquals(400 * 32, measured.stats().outputTokens());
        assertEquals(400 * 31, measured.stats().itl().count(), "31 gaps per 32-token request, measured ones only");
        assertTrue(measured.durationNanos() < all.durationNanos());
        assertTrue(byTime.stats().completed() < 500 && byTime.stats().completed() > 300, "5 s of 25 s left out");
    }
}
