package dev.infersim.sim;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class InterTokenLatencyTest {

    private static SimulationResult run(int outputTokens) {
        Workload workload = Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(256)
                .randomOutputLen(outputTokens).requestRate(10).numPrompts(50).seed(5).build());
        EngineCore engine = EngineCore.create(Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build());
        return Simulation.single(engine, SimulationOptions.defaults(), null).run(workload);
    }

    @Test
    void aRequestHasOneGapFewerThanItsTokensFromTheVeryFirstStep() {
        assertEquals(0, run(1).stats().itl().count(), "a single token has no inter-token gap");
        assertEquals(50 * 15, run(16).stats().itl().count());
    }
}
