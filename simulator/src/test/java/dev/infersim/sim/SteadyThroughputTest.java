package dev.infersim.sim;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The simulator's steady rates: what a short run's whole-window throughput misses, and where saturation shows. */
class SteadyThroughputTest {

    private static SimulationResult run(double rate, int requests) {
        EngineCore engine = EngineCore.create(
                Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(64).build());
        return new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(), SimulationOptions.defaults(),
                null).run(Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(512)
                .randomOutputLen(512).requestRate(rate).numPrompts(requests).seed(3).build()));
    }

    @Test
    void shortStableRunShowsTheSteadyStateThatItsWholeWindowHides() {
        // 100 requests at 10 req/s take ~10 s to send, then each streams 512 tokens for several seconds more.
        SimulationResult r = run(10, 100);
        SimulatorKeys keys = r.simulatorKeys();
        double sent = keys.steadySendRate();
        double takenIn = keys.steadyRequestThroughput();
        double steadyOutput = keys.steadyOutputThroughput();
        double wholeWindow = r.stats().outputTokens() / (r.durationNanos() / 1e9);
        assertEquals(1, takenIn / sent, 0.05, "the engine keeps up: " + takenIn + " of " + sent + " req/s");
        assertEquals(takenIn * 512, steadyOutput, 1e-6);
        assertTrue(wholeWindow < 0.8 * steadyOutput, "drain: " + wholeWindow + " vs " + steadyOutput + " tok/s");
    }

    @Test
    void saturatedRunTakesInFewerRequestsThanItIsSent() {
        SimulationResult r = run(40, 400);
        SimulatorKeys keys = r.simulatorKeys();
        double ratio = keys.steadyRequestThroughput() / keys.steadySendRate();
        assertTrue(r.saturation().saturated(), r.saturation().reason());
        assertTrue(ratio < 0.9, "taken in / sent = " + ratio);
    }

    @Test
    void stoppedRunHasNoSteadyRates() {
        EngineCore engine = EngineCore.create(Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build());
        Simulation sim = new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(),
                SimulationOptions.defaults(), null);
        sim.stop();
        SimulationResult r = sim.run(Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(16)
                .randomOutputLen(4).requestRate(10).numPrompts(10).seed(1).build()));
        assertNull(r.simulatorKeys().steadySendRate());
    }
}
