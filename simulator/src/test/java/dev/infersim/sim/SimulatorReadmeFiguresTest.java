package dev.infersim.sim;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The simulator benchmark's README quotes the capacity the harness finds: recomputed here, so the two cannot drift. */
class SimulatorReadmeFiguresTest {

    @Test
    void theReadmesCapacityIsWhatTheHarnessFinds() throws Exception {
        Deployment deployment = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        String figure = String.format(Locale.ROOT, "Capacity found: %.2f req/s",
                SimulatorBenchmark.capacity(deployment, "chat"));
        String readme = Files.readString(Path.of("../bench/simulator/README.md"));
        assertTrue(readme.contains(figure), "bench/simulator/README.md should say '" + figure + "'");
    }
}
