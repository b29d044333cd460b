package dev.infersim.server.http;

import dev.infersim.server.config.HttpTimeouts;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.util.AttributeKey;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * The timeouts of one HTTP connection ({@link HttpTimeouts}), on its event loop: while no request is in progress the
 * keep-alive timeout runs (a new connection that sends nothing, an idle one between requests); once a request's head
 * begins, the header timeout; while a request is served, none. When one fires the connection closes. Slow clients
 * then hold a descriptor for a bounded time, where a client sending half a header once held one for good. The
 * connection also counts against the process's {@link ConnectionBudget}, which may close it while it is idle.
 *
 * <p>It puts its {@link StrictRequestDecoder} in place of Vert.x's in the connection's pipeline (Netty's handler named
 * {@code httpDecoder}), before any byte has been read: Vert.x tells the connection handler of a new connection
 * synchronously on its event loop, and reads come later on that same loop.
 */
public final class ConnectionGuard {
    /** {@link #idleSinceNanos} of a connection with a request begun or in progress. */
    static final long BUSY = Long.MIN_VALUE;
    private static final AttributeKey<ConnectionGuard> KEY = AttributeKey.valueOf("infersim.connectionGuard");

    private final Vertx vertx;
    private final HttpConnection connection;
    private final Channel channel;
    private final HttpTimeouts timeouts;
    private long timer = -1;
    private int inProgress;
    /** When the connection last became idle (accepted, or its last response ended), or {@link #BUSY}. */
    private volatile long idleSince = System.nanoTime();

    private ConnectionGuard(Vertx vertx, HttpConnection connection, HttpTimeouts timeouts) {
        this.vertx = vertx;
        this.connection = connection;
        this.channel = ((ConnectionBase) connection).channel();
        this.timeouts = timeouts;
    }

    /** Whether {@code connection} is HTTP/1.x, whose decoder a guard replaces (an HTTP/2 one, gRPC's, has none). */
    static boolean guards(HttpConnection connection) {
        return ((ConnectionBase) connection).channel().pipeline().get("httpDecoder") != null;
    }

    /** Guards a new connection of a server with {@code options}; {@link #of} finds the guard from the connection. */
    static void attach(Vertx vertx, HttpConnection connection, HttpServerOptions options, HttpTimeouts timeouts,
                       ConnectionBudget budget) {
        ConnectionGuard guard = new ConnectionGuard(vertx, connection, timeouts);
        ChannelPipeline pipeline = guard.channel.pipeline();
        pipeline.replace("httpDecoder", "httpDecoder", new StrictRequestDecoder(options, guard));
        guard.channel.attr(KEY).set(guard);
        connection.closeHandler(v -> {
            guard.cancel();
            budget.closed(guard);
        });
        guard.arm(timeouts.keepAliveMs());
        budget.opened(guard);
    }

    /** The guard of a connection {@link #attach} guarded; null for another. */
    static ConnectionGuard of(HttpConnection connection) {
        return connection instanceof ConnectionBase c ? c.channel().attr(KEY).get() : null;
    }

    /** The decoder read the first byte of a request head. */
    void headStarted() {
        idleSince = BUSY;
        if (inProgress == 0) {
            arm(timeouts.headerMs());
        }
    }

    /** The decoder read a whole request head: the request is served with no timeout but the idle one. */
    void headRead() {
        idleSince = BUSY;
        inProgress++;
        cancel();
    }

    /** A request's response has ended. */
    void requestEnded() {
        if (inProgress > 0 && --inProgress == 0) {
            idleSince = System.nanoTime();
            arm(timeouts.keepAliveMs());
        }
    }

    /** Any thread: when the connection became idle, or {@link #BUSY}. */
    long idleSinceNanos() {
        return idleSince;
    }

    /** Any thread: closes the connection if it is still idle once its event loop gets to it. */
    void evict() {
        channel.eventLoop().execute(() -> {
            if (idleSince != BUSY) {
                connection.close();
            }
        });
    }

    private void arm(long ms) {
        cancel();
        if (ms > 0) {
            timer = vertx.setTimer(ms, id -> {
                timer = -1;
                connection.close();
            });
        }
    }

    private void cancel() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
            timer = -1;
        }
    }
}
