package dev.infersim.server;

import zmq.Msg;
import zmq.msg.MsgAllocator;

/**
 * The buffer allocator of the KV-event sockets, which keeps a hostile frame size from killing JeroMQ's I/O thread.
 * JeroMQ 0.6.0 checks a ZMTP frame's 8-byte size against ZMQ_MAXMSGSIZE and {@code Integer.MAX_VALUE} as a signed long
 * ({@code zmq.io.coder.Decoder.sizeReady}), so a size with its top bit set passes both checks, is cast to a negative int
 * and throws {@code NegativeArraySizeException} on the I/O thread, after which the socket serves no one. Such a frame
 * gets an empty message here instead: it is read as nothing, which the sockets' readers already ignore, and every
 * other peer is still served. Sizes the checks let through otherwise are at most ZMQ_MAXMSGSIZE, so the heap suffices.
 */
final class ZmtpFrameAllocator implements MsgAllocator {
    static final ZmtpFrameAllocator INSTANCE = new ZmtpFrameAllocator();

    private ZmtpFrameAllocator() {
    }

    @Override
    public Msg allocate(int size) {
        return new Msg(Math.max(0, size));
    }
}
