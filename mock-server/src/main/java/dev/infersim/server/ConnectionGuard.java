package dev.infersim.server;

import io.netty.channel.ChannelPipeline;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * The timeouts of one HTTP connection ({@link HttpTimeouts}), on its event loop: while no request is in progress the
 * keep-alive timeout runs (a new connection that sends nothing, an idle one between requests); once a request's head
 * begins, the header timeout; while a request is served, none. When one fires the connection closes. Slow clients
 * then hold a descriptor for a bounded time, where a client sending half a header once held one for good.
 *
 * <p>It puts its {@link StrictRequestDecoder} in place of Vert.x's in the connection's pipeline (Netty's handler named
 * {@code httpDecoder}), before any byte has been read: Vert.x tells the connection handler of a new connection
 * synchronously on its event loop, and reads come later on that same loop.
 */
final class ConnectionGuard {
    private final Vertx vertx;
    private final HttpConnection connection;
    private final HttpTimeouts timeouts;
    private long timer = -1;
    private int inProgress;

    private ConnectionGuard(Vertx vertx, HttpConnection connection, HttpTimeouts timeouts) {
        this.vertx = vertx;
        this.connection = connection;
        this.timeouts = timeouts;
    }

    /** Whether {@code connection} is HTTP/1.x, whose decoder a guard replaces (an HTTP/2 one has none). */
    static boolean guards(HttpConnection connection) {
        return ((ConnectionBase) connection).channel().pipeline().get("httpDecoder") != null;
    }

    /**
     * Guards a new connection; the returned guard is told of each request's end ({@link #requestEnded}), and
     * {@code onClose} runs when the connection closes.
     */
    static ConnectionGuard attach(Vertx vertx, HttpConnection connection, HttpServerOptions options, HttpTimeouts timeouts,
                                  Runnable onClose) {
        ConnectionGuard guard = new ConnectionGuard(vertx, connection, timeouts);
        ChannelPipeline pipeline = ((ConnectionBase) connection).channel().pipeline();
        pipeline.replace("httpDecoder", "httpDecoder", new StrictRequestDecoder(options, guard));
        connection.closeHandler(v -> {
            guard.cancel();
            onClose.run();
        });
        guard.arm(timeouts.keepAliveMs());
        return guard;
    }

    /** The decoder read the first byte of a request head. */
    void headStarted() {
        if (inProgress == 0) {
            arm(timeouts.headerMs());
        }
    }

    /** The decoder read a whole request head: the request is served with no timeout but the idle one. */
    void headRead() {
        inProgress++;
        cancel();
    }

    /** A request's response has ended. */
    void requestEnded() {
        if (inProgress > 0 && --inProgress == 0) {
            arm(timeouts.keepAliveMs());
        }
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
