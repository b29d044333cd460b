package dev.infersim.server.kv;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.AfterAll;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Coverage-guided fuzzing (Jazzer) of the KV-event replay socket ({@link KvEventReplay}) from the network side: a peer
 * sends either raw bytes (a ZMTP greeting or anything else, straight to the TCP port) or a request of any frames from a
 * ZMQ DEALER. Whatever it sends, the replay socket answers it or ignores it, and the well-formed request a client sends
 * next is answered in full, every buffered message and the end marker.
 *
 * <p>{@code JAZZER_FUZZ=1} fuzzes for {@code maxDuration} from the seeds under
 * {@code src/test/resources/dev/infersim/server/kv/KvEventReplayFuzzTestInputs} (CI: {@code .ci/run}).
 */
class KvEventReplayFuzzTest {
    private static final byte[] TOPIC = "kv".getBytes(StandardCharsets.UTF_8);
    private static final int BUFFERED = 3;
    private static final ZContext ZMQ_CONTEXT = new ZContext(1);
    private static final int PORT = freePort();
    private static final KvEventReplay REPLAY = start();
    private static final ZMQ.Socket CLIENT = client();

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static KvEventReplay start() {
        KvEventReplay r = new KvEventReplay(ZMQ_CONTEXT, "tcp://127.0.0.1:" + PORT, TOPIC, 10, "fuzzed-replay");
        for (long seq = 0; seq < BUFFERED; seq++) {
            r.add(seq, new byte[] {(byte) seq});
        }
        return r;
    }

    private static ZMQ.Socket client() {
        ZMQ.Socket dealer = ZMQ_CONTEXT.createSocket(SocketType.DEALER);
        dealer.setReceiveTimeOut(10_000);
        dealer.setHandshakeIvl(KvEventPublisher.HANDSHAKE_MS);
        dealer.connect("tcp://127.0.0.1:" + PORT);
        return dealer;
    }

    @AfterAll
    static void stop() {
        REPLAY.close();
        ZMQ_CONTEXT.close();
    }

    @FuzzTest(maxDuration = "10s")
    void everyPeerIsAnsweredOrIgnoredAndTheNextClientStillServed(FuzzedDataProvider data) throws Exception {
        // the test talks to its own socket on loopback, which Jazzer's request-forgery detector would report
        BugDetectors.allowNetworkConnections((host, port) -> port == PORT);
        if (data.consumeBoolean()) {
            try (Socket raw = new Socket("127.0.0.1", PORT)) {
                raw.getOutputStream().write(data.consumeRemainingAsBytes());
                raw.getOutputStream().flush();
            }
        } else {
            ZMQ.Socket peer = ZMQ_CONTEXT.createSocket(SocketType.DEALER);
            try {
                peer.setLinger(0);
                peer.connect("tcp://127.0.0.1:" + PORT);
                int frames = data.consumeInt(1, 4);
                for (int i = 0; i < frames; i++) {
                    byte[] frame = i == frames - 1 ? data.consumeRemainingAsBytes() : data.consumeBytes(data.consumeInt(0, 16));
                    peer.send(frame, i < frames - 1 ? ZMQ.SNDMORE : 0);
                }
            } finally {
                ZMQ_CONTEXT.destroySocket(peer);
            }
        }
        assertEquals(List.of(0L, 1L, 2L), replayFrom(0), "a well-formed request is answered in full");
    }

    /** A client's request from {@code seq}, read to the end marker, drained of any answers the fuzzed peer got; the seqs. */
    private static List<Long> replayFrom(long seq) {
        CLIENT.sendMore(new byte[0]);
        CLIENT.send(ByteBuffer.allocate(8).putLong(seq).array());
        List<Long> seqs = new ArrayList<>();
        while (true) {
            List<byte[]> frames = new ArrayList<>();
            do {
                byte[] frame = CLIENT.recv();
                assertNotNull(frame, "the replay socket answers");
                frames.add(frame);
            } while (CLIENT.hasReceiveMore());
            assertEquals(4, frames.size(), "['', topic, seq, payload]");
            long s = ByteBuffer.wrap(frames.get(2)).getLong();
            if (s == -1) {
                return seqs;
            }
            assertArrayEquals(TOPIC, frames.get(1));
            seqs.add(s);
        }
    }
}
