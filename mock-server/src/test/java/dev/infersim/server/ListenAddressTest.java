package dev.infersim.server;

import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The base URL and ready line name the listening address in a form clients can use. */
class ListenAddressTest {

    @Test
    void anIpv6HostIsBracketedInTheBaseUrlAndReadyLine() throws Exception {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName("::1"))) {
            Assumptions.assumeTrue(probe.isBound());
        } catch (java.io.IOException e) {
            Assumptions.abort("no IPv6 loopback here: " + e.getMessage());
        }
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(4), 20).host("::1").build());
        try {
            // http://::1:8000 is not a URL (the port reads as part of the address); RFC 3986 wants http://[::1]:8000.
            assertEquals("http://[::1]:" + server.port(), server.baseUrl());
            assertTrue(server.readyLine().contains(" at http://[::1]:" + server.port() + "/v1 "), server.readyLine());
            assertEquals(200, TestServers.get(server, "/health").status());
        } finally {
            TestServers.close(server);
        }
    }
}
