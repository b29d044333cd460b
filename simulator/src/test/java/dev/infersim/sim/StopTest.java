package dev.infersim.sim;

import dev.infersim.result.RequestLogWriter;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StopTest {

    @Test
    void aStoppedRunFinishesTheRequestsItSentAndReportsThem(@TempDir Path dir) throws IOException {
        Workload workload = Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(256)
                .randomOutputLen(16).requestRate(50).numPrompts(1000).seed(3).build());
        Simulation[] simulation = new Simulation[1];
        Router stopAfter100 = new Router() {
            private int routed;

            @Override
            public int route(RoutedRequest request, RoutingTarget[] replicas) {
                if (++routed == 100) {
                    simulation[0].stop(); // as an interrupt would, from outside the run
                }
                return 0;
            }
        };
        Path detail = dir.resolve("detail.jsonl");
        SimulationResult result;
        try (RequestLogWriter writer = new RequestLogWriter(detail, false)) {
            simulation[0] = new Simulation(new Replica[] {new Replica(0, EngineCore.create(
                    Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build()))},
                    stopAfter100, SimulationOptions.defaults(), writer);
            result = simulation[0].run(workload);
        }

        assertTrue(result.stopped());
        assertEquals(100, result.stats().completed(), "every request sent before the stop, and no other");
        assertEquals(0, result.unmeasuredRequests(), "unsent requests are not warmups");
        assertEquals(100, Files.readAllLines(detail).size());
    }
}
