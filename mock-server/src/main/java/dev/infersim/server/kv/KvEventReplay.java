package dev.infersim.server.kv;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;
import org.zeromq.ZMsg;

import java.math.BigInteger;
import java.nio.ByteBuffer;

/**
 * vLLM's KV-event replay ({@code ZmqEventPublisher._service_replay}): a ROUTER socket, always bound, and the last
 * {@code bufferSteps} published messages. A subscriber that saw a gap in the sequence numbers sends, from a REQ socket,
 * the first sequence number it missed (8 bytes big-endian); it gets back every buffered message from that number on,
 * each as three frames {@code [topic, seq, payload]} (what the PUB sent), then the end marker {@code ["", -1, ""]}
 * (the sequence 8 bytes of 0xFF). A request of any other shape (not three frames, a delimiter that is not empty, a
 * sequence that is not 8 bytes) is ignored, and a peer that announces a message over {@value #MAX_REQUEST_BYTES} bytes
 * is dropped before it is read (ZMQ_MAXMSGSIZE).
 *
 * <p>The engine thread {@link #add}s each message after publishing it; a thread of its own owns the ROUTER socket and
 * answers requests, so a replay never holds up a step.
 */
final class KvEventReplay implements AutoCloseable {
    private static final byte[] END_SEQ = ByteBuffer.allocate(Long.BYTES).putLong(-1).array();
    private static final byte[] EMPTY = new byte[0];
    /** The largest message a peer may send: a request is an 8-byte sequence (ZMTP commands from a peer pass too). */
    static final long MAX_REQUEST_BYTES = 4 * 1024;
    /** How often the thread looks up from an idle socket to see whether it should stop. */
    private static final int POLL_MS = 100;

    private volatile byte[] topic;
    private final byte[][] payloads;
    /** The sequence number the next {@link #add} gets; messages {@code [next - held, next)} are buffered. */
    private long next;
    private int held;
    private final ZMQ.Socket router;
    private final Thread thread;
    private volatile boolean stopping;

    /**
     * Binds {@code endpoint} at once (a failure throws {@link ZMQException}) and starts answering.
     */
    KvEventReplay(ZContext context, String endpoint, byte[] topic, int bufferSteps, String threadName) {
        this.topic = topic;
        this.payloads = new byte[bufferSteps][];
        router = context.createSocket(SocketType.ROUTER);
        router.setReceiveTimeOut(POLL_MS);
        router.setLinger(0);
        router.setHandshakeIvl(KvEventPublisher.HANDSHAKE_MS);
        router.setMaxMsgSize(MAX_REQUEST_BYTES);
        router.setMsgAllocator(new ZmtpFrameAllocator(MAX_REQUEST_BYTES));
        router.setIPv6(endpoint.startsWith("tcp://["));
        router.bind(endpoint);
        thread = new Thread(this::serve, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    /** The topic replies carry from now on (the publisher's, once the server knows its port). */
    void topic(byte[] t) {
        topic = t;
    }

    /** Engine thread: buffers the message just published as {@code seq}, dropping the oldest beyond the buffer. */
    synchronized void add(long seq, byte[] payload) {
        payloads[(int) (seq % payloads.length)] = payload;
        next = seq + 1;
        held = Math.min(held + 1, payloads.length);
    }

    private void serve() {
        while (!stopping) {
            ZMsg request;
            try {
                request = ZMsg.recvMsg(router);
            } catch (ZMQException e) {
                return; // the context is closing
            }
            if (request != null) {
                answer(request);
            }
        }
    }

    private void answer(ZMsg request) {
        if (request.size() != 3) {
            return;
        }
        byte[] identity = request.pop().getData();
        byte[] delimiter = request.pop().getData(); // the REQ socket's empty frame
        byte[] seq = request.pop().getData();
        if (delimiter.length != 0 || seq.length != Long.BYTES) {
            return;
        }
        long start = startSeq(seq);
        long from;
        long to;
        byte[][] batch;
        synchronized (this) {
            from = Math.max(start, next - held);
            to = next;
            batch = new byte[(int) Math.max(0, to - from)][];
            for (long s = from; s < to; s++) {
                batch[(int) (s - from)] = payloads[(int) (s % payloads.length)];
            }
        }
        for (int i = 0; i < batch.length; i++) {
            send(identity, topic, ByteBuffer.allocate(Long.BYTES).putLong(from + i).array(), batch[i]);
        }
        send(identity, EMPTY, END_SEQ, EMPTY);
    }

    private void send(byte[] identity, byte[] first, byte[] seq, byte[] payload) {
        router.sendMore(identity);
        router.sendMore(EMPTY);
        router.sendMore(first);
        router.sendMore(seq);
        router.send(payload);
    }

    /** Python's {@code int.from_bytes(b, "big")}: unsigned; a number past every sequence replays nothing. */
    private static long startSeq(byte[] bytes) {
        BigInteger n = new BigInteger(1, bytes);
        return n.bitLength() < Long.SIZE ? n.longValue() : Long.MAX_VALUE;
    }

    /** Stops answering; the caller then closes the context, which closes the socket. */
    @Override
    public void close() {
        stopping = true;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
