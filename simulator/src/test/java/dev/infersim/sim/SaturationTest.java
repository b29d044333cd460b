package dev.infersim.sim;

import dev.infersim.result.RunInfo;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.arrival.RampStrategy;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A small engine (8 sequences) serves 512-in / 64-out requests at about 15 req/s; offered loads well below and well
 * above that must get opposite verdicts, and above it the engine's waiting queue must keep growing.
 */
class SaturationTest {

    private static SimulationResult run(double ratePerS, int requests) {
        return run(WorkloadSpec.builder().datasetName("random").randomInputLen(512).randomOutputLen(64)
                .requestRate(ratePerS).numPrompts(requests).seed(5).build());
    }

    private static SimulationResult run(WorkloadSpec spec) {
        EngineCore engine = EngineCore.create(Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b"))
                .maxNumSeqs(8).build());
        return Simulation.single(engine, SimulationOptions.defaults(), null).run(Workload.open(spec));
    }

    @Test
    void overloadGrowsTheQueueAndIsFlaggedSaturated() {
        SimulationResult result = run(120, 3000);

        assertTrue(result.saturation().saturated(), result.saturation().reason());
        Timeline t = result.timeline();
        long lastArrival = 0;
        for (int i = 0; i < t.size(); i++) {
            if (t.arrivals(i) < 3000) {
                lastArrival = t.timeNanos(i);
            }
        }
        assertTrue(waitingAt(t, lastArrival * 3 / 4) > waitingAt(t, lastArrival / 2) + 100,
                "waiting queue keeps growing: " + waitingAt(t, lastArrival / 2) + " -> " + waitingAt(t, lastArrival * 3 / 4));
        assertEquals(3000, result.stats().completed(), "the queue drains after the last arrival");
        assertEquals(true, result.report(info()).producer().saturated());
    }

    @Test
    void loadBelowCapacityIsNotSaturated() {
        SimulationResult result = run(10, 3000);

        assertFalse(result.saturation().saturated(), result.saturation().reason());
        assertTrue(result.littlesLawError() < 0.01, "Little's law: " + result.littlesLawError());
    }

    @Test
    void rampPastCapacityIsFlaggedSaturated() {
        SimulationResult result = run(WorkloadSpec.builder().datasetName("random").randomInputLen(512).randomOutputLen(64)
                .rampUp(RampStrategy.LINEAR, 1, 40).numPrompts(3000).seed(5).build());

        assertTrue(result.saturation().saturated(), result.saturation().reason());
    }

    private static int waitingAt(Timeline t, long nanos) {
        int waiting = 0;
        for (int i = 0; i < t.size() && t.timeNanos(i) <= nanos; i++) {
            waiting = t.waiting(i);
        }
        return waiting;
    }

    static RunInfo info() {
        return new RunInfo("20260101-000000", "infersim", "m", "m", 1, 1, 1, 0, java.util.List.of("ttft"),
                java.util.List.of(99.0));
    }
}
