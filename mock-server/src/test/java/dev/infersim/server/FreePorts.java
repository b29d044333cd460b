package dev.infersim.server;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Free TCP ports for tests whose servers must be told a port rather than bind port 0 (replica i on port + i, data-parallel
 * rank r's KV events on port + r, a process that cannot report its port). A port found free and released is not
 * enough for its neighbours: Linux gives bind(0) odd ports and outgoing connections even ones, so the port after a free
 * one is often some connection's. Every port of a run is held open until all of them are, then all are released.
 */
public final class FreePorts {
    private static final int ATTEMPTS = 100;

    private FreePorts() {
    }

    /** One free port. */
    public static int one() throws IOException {
        return consecutive(1);
    }

    /** The first of {@code n} consecutive ports that are all free on every interface. */
    public static int consecutive(int n) throws IOException {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            List<ServerSocket> held = new ArrayList<>();
            try {
                ServerSocket first = new ServerSocket(0);
                held.add(first);
                int base = first.getLocalPort();
                if (base + n - 1 > 65535) {
                    continue;
                }
                if (holdAll(held, base + 1, base + n)) {
                    return base;
                }
            } finally {
                for (ServerSocket s : held) {
                    s.close();
                }
            }
        }
        throw new IOException("no " + n + " consecutive free ports in " + ATTEMPTS + " tries");
    }

    /** Binds every port in [from, to) into {@code held}; false at the first one taken. */
    private static boolean holdAll(List<ServerSocket> held, int from, int to) {
        for (int port = from; port < to; port++) {
            try {
                held.add(new ServerSocket(port));
            } catch (IOException taken) {
                return false;
            }
        }
        return true;
    }
}
