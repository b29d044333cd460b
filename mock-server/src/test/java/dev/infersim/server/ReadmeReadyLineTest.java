package dev.infersim.server;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README shows the ready line of its own example command: that line must be the one the server prints. */
class ReadmeReadyLineTest {

    @Test
    void theReadmesReadyLineIsWhatTheServerPrintsForTheSameFlags() throws Exception {
        // serve --model llama-3.1-8b --gpu h100 --port 8000 --time-scale 10, on a free port instead of 8000
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        MockServer server = TestServers.start(ServerOptions.builder(d).port(0).timeScale(10).build());
        try {
            String line = server.readyLine().replace(":" + server.port() + "/", ":8000/");
            String readme = Files.readString(Path.of("README.md"));
            assertTrue(readme.contains("\n" + line + "\n"), "mock-server/README.md should show: " + line);
        } finally {
            TestServers.close(server);
        }
    }
}
