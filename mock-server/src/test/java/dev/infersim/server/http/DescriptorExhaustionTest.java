package dev.infersim.server.http;

import dev.infersim.server.ChildServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server out of file descriptors keeps its acceptor and serves again once descriptors free up. Once, the acceptor
 * thread's own warning about it ("Too many open files") needed a file to format, threw, and ended the thread: the
 * process lived on and accepted nothing. The server runs in a child JVM whose descriptor limit is lowered to 256 (the
 * shell's {@code ulimit -n}, which any process may lower for itself) and gets 400 connections that send half a header.
 * A front door and its replicas share one process: 300 connections that send nothing at all to the door once took
 * every descriptor, and the replicas accepted nothing until they were released; now the idlest give way
 * ({@link ConnectionBudget}) and the door and the replicas serve throughout.
 */
@EnabledOnOs(OS.LINUX)
class DescriptorExhaustionTest {
    private static final int LIMIT = 256;
    private static final int CONNECTIONS = 400;

    @Test
    void aServerOutOfDescriptorsAcceptsAgainOnceTheyAreFreed() throws Exception {
        Process child = ChildServer.start("ulimit -n " + LIMIT, "-Xmx256m");
        StringBuilder output = new StringBuilder();
        List<Socket> held = new ArrayList<>();
        try {
            int port = ChildServer.port(child, output);
            for (int i = 0; i < CONNECTIONS; i++) {
                Socket s = new Socket("127.0.0.1", port); // the kernel completes the handshake whether or not the server accepts
                s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
                held.add(s);
            }
            Thread.sleep(2_000); // the acceptor meets the limit and warns, over and over
            for (Socket s : held) {
                s.close();
            }
            held.clear();
            assertTrue(child.isAlive(), output.toString());
            assertTrue(healthAnswers(port), "the server accepts and answers again; its output:\n" + output);
        } finally {
            release(held, child);
        }
    }

    @Test
    void silentConnectionsToAFrontDoorStarveNeitherItNorItsReplicas() throws Exception {
        Process child = ChildServer.startFrontDoor("ulimit -n " + LIMIT, "-Xmx256m");
        StringBuilder output = new StringBuilder();
        List<Socket> held = new ArrayList<>();
        try {
            int[] ports = ChildServer.ports(child, output);
            for (int port : ports) {
                assertTrue(completionAnswers(port), "port " + port + " serves; output:\n" + output); // a server in use
            }
            for (int i = 0; i < 300; i++) {
                held.add(new Socket("127.0.0.1", ports[0])); // and never a byte
            }
            for (int port : ports) {
                assertTrue(completionAnswers(port), "port " + port + " serves with 300 silent connections held; output:\n" + output);
            }
            assertTrue(child.isAlive(), output.toString());
        } finally {
            release(held, child);
        }
    }

    /** Closes the connections still held, then ends the child. */
    private static void release(List<Socket> held, Process child) throws Exception {
        for (Socket s : held) {
            s.close();
        }
        child.getOutputStream().close();
        child.destroy();
        child.waitFor();
    }

    /** Whether a completion gets a 200 within 30 s. */
    private static boolean completionAnswers(int port) throws InterruptedException {
        String body = "{\"prompt\":\"hi\",\"max_tokens\":2}";
        return answers(port, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length() + "\r\nConnection: close\r\n\r\n" + body);
    }

    /** Whether GET /health gets a 200 within 30 s (the acceptor retries a second after each failed accept). */
    private static boolean healthAnswers(int port) throws InterruptedException {
        return answers(port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    }

    /** Whether {@code request} gets a 200 within 30 s, tried again every half second. */
    private static boolean answers(int port, String request) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                s.setSoTimeout(5_000);
                s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
                InputStream in = s.getInputStream();
                byte[] head = in.readNBytes(12);
                if (new String(head, StandardCharsets.US_ASCII).equals("HTTP/1.1 200")) {
                    return true;
                }
            } catch (java.io.IOException e) {
                // not yet
            }
            Thread.sleep(500);
        }
        return false;
    }
}
