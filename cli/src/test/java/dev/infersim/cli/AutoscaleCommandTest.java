package dev.infersim.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The autoscale command's refusals; its agreement with the simulator is in AutoscaleAgreesWithSimulationTest. */
class AutoscaleCommandTest {

    private static void assertOneLineError(CliRun r, String flag) {
        assertEquals(2, r.exitCode(), r.out() + r.err());
        String err = r.err().strip();
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.contains(flag), err);
    }

    @Test
    void anUnreachableFleetIsOneLineNamingTheFlag() throws IOException {
        int closedPort;
        try (ServerSocket probe = new ServerSocket(0)) {
            closedPort = probe.getLocalPort();
        }
        assertOneLineError(CliRun.of("autoscale", "--fleet", "http://127.0.0.1:" + closedPort, "--autoscale-target", "4",
                "--max-replicas", "3"), "--fleet");
        assertOneLineError(CliRun.of("autoscale", "--fleet", "not a url", "--autoscale-target", "4",
                "--max-replicas", "3"), "--fleet");
    }

    @Test
    void badSettingsAreOneLineNamingTheFlag() {
        assertOneLineError(CliRun.of("autoscale", "--fleet", "http://127.0.0.1:1", "--max-replicas", "3"), "--autoscale-target");
        assertOneLineError(CliRun.of("autoscale", "--fleet", "http://127.0.0.1:1", "--autoscale-target", "4",
                "--max-replicas", "3", "--time-scale", "0"), "--time-scale");
        assertOneLineError(CliRun.of("autoscale", "--fleet", "http://127.0.0.1:1", "--autoscale-target", "4",
                "--max-replicas", "3", "--scale-down-window", "4000"), "--scale-down-window");
    }
}
