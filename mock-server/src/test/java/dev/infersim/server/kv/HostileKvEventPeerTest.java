package dev.infersim.server.kv;

import dev.infersim.server.FreePorts;
import dev.infersim.server.TestServers;
import dev.infersim.server.config.KvEventsConfig;
import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A hostile ZMTP peer, a plain socket that greets as ZMQ does and then announces a 2,000,000,000-byte frame (109 bytes in
 * all), once killed the KV-event sockets' I/O thread: subscribers heard nothing more and new ones could not connect.
 * Now the peer is dropped before any of the frame is read (ZMQ_MAXMSGSIZE), on the PUB socket and on the replay socket
 * alike, and subscribers and replay clients go on as before.
 */
class HostileKvEventPeerTest {
    private static final String PROMPT = "{\"prompt\":\"%d the quick brown fox jumps over the lazy dog again and again and "
            + "again until the block is full\",\"max_tokens\":1}";

    @Test
    void aPeerAnnouncingAHugeFrameIsDroppedAndSubscribersAndReplayGoOn() throws Exception {
        int port = FreePorts.one();
        int replayPort = FreePorts.one();
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(4), 50)
                .kvEvents(new KvEventsConfig("tcp://*:" + port, "", "tcp://*:" + replayPort, 100, 1000)).build());
        try (ZContext zmq = new ZContext()) {
            ZMQ.Socket before = subscriber(zmq, port);
            int[] prompt = {0};
            assertNotNull(nextMessage(server, before, prompt), "a subscriber hears the events");

            assertTrue(dropsAHugeFrame(port, "SUB"), "the PUB socket dropped the peer");
            assertTrue(dropsAHugeFrame(replayPort, "DEALER"), "the replay socket dropped the peer");

            byte[][] heard = nextMessage(server, before, prompt);
            assertNotNull(heard, "the subscriber from before still hears the events");
            ZMQ.Socket after = subscriber(zmq, port);
            assertNotNull(nextMessage(server, after, prompt), "a new subscriber connects and hears them");

            ZMQ.Socket dealer = zmq.createSocket(SocketType.DEALER);
            dealer.setReceiveTimeOut(10_000);
            dealer.setHandshakeIvl(KvEventPublisher.HANDSHAKE_MS);
            dealer.connect("tcp://127.0.0.1:" + replayPort);
            long seq = ByteBuffer.wrap(heard[1]).getLong();
            dealer.sendMore(new byte[0]);
            dealer.send(ByteBuffer.allocate(8).putLong(seq).array());
            dealer.recv(); // the delimiter
            dealer.recv(); // the topic
            assertEquals(seq, ByteBuffer.wrap(dealer.recv()).getLong(), "the replay socket still answers");
        } finally {
            TestServers.close(server);
        }
    }

    /**
     * Greets {@code port} as a ZMTP 3.0 peer of {@code socketType} with the NULL mechanism (RFC 23), then sends the
     * header of a 2,000,000,000-byte frame; true when the server closes the connection.
     */
    private static boolean dropsAHugeFrame(int port, String socketType) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(new byte[] {(byte) 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3, 0});
            out.write(ByteBuffer.allocate(20).put("NULL".getBytes(StandardCharsets.US_ASCII)).array());
            out.write(new byte[32]); // as-server 0 and the filler
            byte[] name = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
            byte[] type = socketType.getBytes(StandardCharsets.US_ASCII);
            ByteBuffer ready = ByteBuffer.allocate(1 + 5 + 1 + name.length + 4 + type.length);
            ready.put((byte) 5).put("READY".getBytes(StandardCharsets.US_ASCII)).put((byte) name.length).put(name)
                    .putInt(type.length).put(type);
            out.write(0x04); // a short command frame
            out.write(ready.capacity());
            out.write(ready.array());
            out.write(0x02); // a long message frame, the last
            out.write(ByteBuffer.allocate(8).putLong(2_000_000_000L).array());
            s.getOutputStream().write(out.toByteArray());
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            try {
                while (in.read() >= 0) {
                    // the server's greeting and READY, then the end of the connection
                }
                return true;
            } catch (SocketTimeoutException e) {
                return false;
            } catch (java.net.SocketException reset) {
                return true;
            }
        }
    }

    private static ZMQ.Socket subscriber(ZContext zmq, int port) {
        ZMQ.Socket sub = zmq.createSocket(SocketType.SUB);
        sub.setHandshakeIvl(KvEventPublisher.HANDSHAKE_MS);
        sub.setReceiveTimeOut(100);
        sub.subscribe(new byte[0]);
        sub.connect("tcp://127.0.0.1:" + port);
        return sub;
    }

    /** Sends new prompts until {@code sub} hears a message (a new subscription takes a moment); its frames, or null. */
    private static byte[][] nextMessage(MockServer server, ZMQ.Socket sub, int[] prompt) throws Exception {
        for (int attempt = 0; attempt < 100; attempt++) {
            assertEquals(200, TestServers.post(server, "/v1/completions", PROMPT.formatted(prompt[0]++)).status());
            byte[] topic = sub.recv();
            if (topic != null) {
                byte[] seq = sub.recv();
                byte[] payload = sub.recv();
                while (sub.hasReceiveMore()) {
                    sub.recv();
                }
                return new byte[][] {topic, seq, payload};
            }
        }
        return null;
    }
}
