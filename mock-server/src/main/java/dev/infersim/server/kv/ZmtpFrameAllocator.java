package dev.infersim.server.kv;

import zmq.Msg;
import zmq.msg.MsgAllocator;

/**
 * The buffer allocator of a KV-event socket, which keeps a hostile frame size from killing JeroMQ's I/O thread.
 * JeroMQ 0.6.0 checks a ZMTP frame's 8-byte size against ZMQ_MAXMSGSIZE and {@code Integer.MAX_VALUE} as a signed long
 * ({@code zmq.io.coder.Decoder.sizeReady}), so a size with its top bit set passes both checks and is cast to an int:
 * a negative one throws {@code NegativeArraySizeException} on the I/O thread, a large one {@code OutOfMemoryError},
 * after which the socket serves no one. Every size the checks pass honestly is at most the socket's ZMQ_MAXMSGSIZE, so
 * any other gets an empty message: the frame is read as nothing, which the sockets' readers already ignore, and every
 * other peer is still served.
 */
final class ZmtpFrameAllocator implements MsgAllocator {
    private final int maxMessageBytes;

    /** @param maxMessageBytes the socket's ZMQ_MAXMSGSIZE */
    ZmtpFrameAllocator(long maxMessageBytes) {
        this.maxMessageBytes = (int) Math.min(Integer.MAX_VALUE, maxMessageBytes);
    }

    @Override
    public Msg allocate(int size) {
        return new Msg(size < 0 || size > maxMessageBytes ? 0 : size);
    }
}
