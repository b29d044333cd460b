package dev.infersim.sim;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FleetAndConcurrencyCapTest {

    private static Replica[] fleet(int n) {
        Replica[] replicas = new Replica[n];
        for (int i = 0; i < n; i++) {
            replicas[i] = new Replica(i, EngineCore.create(
                    Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(8).build()));
        }
        return replicas;
    }

    private static Workload workload(double rate, int cap) {
        return Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(512).randomOutputLen(64)
                .randomRangeRatio(0.5).requestRate(rate).maxConcurrency(cap).numPrompts(2000).seed(6).build());
    }

    @Test
    void twoReplicasServeWhatOneCannot() {
        SimulationResult one = new Simulation(fleet(1), new RoundRobinRouter(), SimulationOptions.defaults(), null)
                .run(workload(25, 0));
        SimulationResult two = new Simulation(fleet(2), new LeastOutstandingRequestsRouter(), SimulationOptions.defaults(), null)
                .run(workload(25, 0));

        assertTrue(one.saturation().saturated(), one.saturation().reason());
        assertTrue(!two.saturation().saturated(), two.saturation().reason());
        assertTrue(two.stats().ttft().percentileMs(99) < one.stats().ttft().percentileMs(99) / 10);
        long steps0 = two.replicas()[0].engine().steps();
        long steps1 = two.replicas()[1].engine().steps();
        assertTrue(Math.abs(steps0 - steps1) < 0.1 * (steps0 + steps1), "balanced: " + steps0 + " vs " + steps1);
        assertTrue(two.littlesLawError() < 0.01);
        assertEquals(2, two.simulatorKeys().replicas().ready()[0]);
    }

    @Test
    void roundRobinAlternatesReplicas() {
        Replica[] replicas = fleet(3);
        RoundRobinRouter router = new RoundRobinRouter();
        assertEquals(0, router.route(null, replicas));
        assertEquals(1, router.route(null, replicas));
        assertEquals(2, router.route(null, replicas));
        assertEquals(0, router.route(null, replicas));
    }

    @Test
    void concurrencyCapQueuesOpenLoopArrivalsAtTheClient() {
        SimulationResult capped = new Simulation(fleet(1), new RoundRobinRouter(), SimulationOptions.defaults(), null)
                .run(workload(25, 4));

        assertEquals(2000, capped.stats().completed());
        assertTrue(capped.stats().clientQueueTime().meanMs() > 100, "arrivals wait for one of 4 slots");
        Timeline t = capped.timeline();
        for (int i = 0; i < t.size(); i++) {
            assertTrue(t.running(i) + t.waiting(i) <= 4, "never more than 4 requests in the engine");
        }
        assertTrue(capped.saturation().saturated(), "25 req/s exceeds what 4 slots serve: " + capped.saturation().reason());
        assertTrue(capped.littlesLawError() < 0.01);
    }
}
