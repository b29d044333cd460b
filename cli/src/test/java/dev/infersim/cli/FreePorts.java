package dev.infersim.cli;

import java.io.IOException;
import java.net.ServerSocket;

/**
 * A free TCP port for a process that cannot bind port 0 and report it back (a gateway, a container on the host
 * network). The port is free when found and released at once: the caller retries where another process wins it.
 */
final class FreePorts {
    private FreePorts() {
    }

    static int one() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
