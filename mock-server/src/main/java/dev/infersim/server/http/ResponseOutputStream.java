package dev.infersim.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.vertx.core.Context;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.internal.buffer.BufferInternal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A response body written from a worker thread, for bodies too large to build on an event loop (a 100,000-token prompt's
 * logprobs are over 100 MB of JSON): bytes gather in a {@value #CHUNK_BYTES}-byte buffer, each full buffer is handed to
 * the connection's event loop as one HTTP chunk, and the writer waits while the connection's write queue is full, so a
 * response holds a few chunks of memory however large it is, and the event loop only passes buffers on. A client that
 * goes away ({@link #abort}) makes the next write throw, which ends the worker's work.
 */
public final class ResponseOutputStream extends OutputStream {
    /**
     * Bodies larger than this are parsed and tokenized on a worker thread (about a millisecond of tokenizing), and
     * responses estimated larger are written by one of these.
     */
    public static final int OFF_LOOP_BYTES = 64 * 1024;
    static final int CHUNK_BYTES = 64 * 1024;
    /** How often a writer waiting for the socket checks whether the client went away. */
    private static final long POLL_MS = 200;

    private final Context context;
    private final HttpServerResponse response;
    private ByteBuf chunk;
    private volatile boolean aborted;

    /** A stream into {@code response}, whose head (chunked, content type) the caller has set on its event loop. */
    public ResponseOutputStream(Context context, HttpServerResponse response) {
        this.context = context;
        this.response = response;
    }

    /** Any thread: the client is gone; the writer stops at its next write. */
    public void abort() {
        aborted = true;
    }

    @Override
    public void write(int b) throws IOException {
        room(1).writeByte(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            ByteBuf c = room(1);
            int n = Math.min(len, c.writableBytes());
            c.writeBytes(b, off, n);
            off += n;
            len -= n;
        }
    }

    /** Hands what is buffered to the event loop and waits until the connection can take more. */
    @Override
    public void flush() throws IOException {
        if (chunk == null || chunk.readableBytes() == 0) {
            return;
        }
        ByteBuf full = chunk;
        chunk = null;
        CompletableFuture<Void> accepted = new CompletableFuture<>();
        context.runOnContext(v -> {
            if (aborted || response.closed() || response.ended()) {
                full.release();
                accepted.completeExceptionally(new IOException("the client went away"));
                return;
            }
            response.write(BufferInternal.buffer(full)).onComplete(ar -> full.release());
            if (response.writeQueueFull()) {
                response.drainHandler(x -> accepted.complete(null));
            } else {
                accepted.complete(null);
            }
        });
        await(accepted);
    }

    /** Flushes; the caller ends the response on its event loop. */
    @Override
    public void close() throws IOException {
        try {
            flush();
        } finally {
            if (chunk != null) {
                chunk.release();
                chunk = null;
            }
        }
    }

    private ByteBuf room(int bytes) throws IOException {
        if (aborted) {
            throw new IOException("the client went away");
        }
        if (chunk != null && chunk.writableBytes() < bytes) {
            flush();
        }
        if (chunk == null) {
            chunk = PooledByteBufAllocator.DEFAULT.directBuffer(CHUNK_BYTES, CHUNK_BYTES);
        }
        return chunk;
    }

    private void await(CompletableFuture<Void> accepted) throws IOException {
        while (true) {
            try {
                accepted.get(POLL_MS, TimeUnit.MILLISECONDS);
                return;
            } catch (TimeoutException e) {
                if (aborted) {
                    throw new IOException("the client went away");
                }
            } catch (ExecutionException e) {
                throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while the client was reading");
            }
        }
    }
}
