package dev.infersim.bench.run;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientConnection;
import io.vertx.core.http.HttpConnectOptions;

import java.util.ArrayDeque;

/**
 * The HTTP/1.1 keep-alive connections of one lane, confined to its event loop: an idle stack, at most {@code max}
 * open, and a queue of requests waiting for one when all are busy. It replaces Vert.x's connection pool, whose acquire
 * scans every pooled connection and builds a context per request: a fifth of the client's CPU at 1,000 requests/s,
 * on the path between a request's scheduled time and its send. Reusing the most recently idle connection first keeps
 * the set of warm connections small.
 */
public final class LaneConnections {
    private final HttpClientAgent client;
    private final HttpConnectOptions target;
    private final int max;
    private final ArrayDeque<Connection> idle = new ArrayDeque<>();
    private final ArrayDeque<Promise<Connection>> waiting = new ArrayDeque<>();
    private int open;

    /** One connection: {@code closed} once either side closed it, so it is never handed out again. */
    static final class Connection {
        private final HttpClientConnection http;
        private boolean closed;

        Connection(HttpClientConnection http) {
            this.http = http;
        }

        HttpClientConnection http() {
            return http;
        }
    }

    public LaneConnections(HttpClientAgent client, HttpConnectOptions target, int max) {
        this.client = client;
        this.target = target;
        this.max = max;
    }

    /** An idle connection now, else a new one, else (at {@code max}) the next one released. On the event loop. */
    Future<Connection> acquire() {
        Connection c;
        while ((c = idle.pollLast()) != null) {
            if (!c.closed) {
                return Future.succeededFuture(c);
            }
        }
        if (open < max) {
            return connect();
        }
        Promise<Connection> promise = Promise.promise();
        waiting.add(promise);
        return promise.future();
    }

    /**
     * Takes back a connection whose last exchange {@code completed} at the HTTP level (the whole response was read);
     * any other is closed, as its state is unknown. Either way a waiting request gets a connection.
     */
    void release(Connection c, boolean completed) {
        if (c.closed) {
            return; // its close handler already accounted for it
        }
        if (!completed) {
            c.closed = true;
            open--;
            c.http.close();
            serveWaiter(null);
            return;
        }
        if (!serveWaiter(c)) {
            idle.add(c);
        }
    }

    /** Hands {@code c} (or, when null, a new connection) to the first waiter; false when nobody waits. */
    private boolean serveWaiter(Connection c) {
        Promise<Connection> next = waiting.poll();
        if (next == null) {
            return false;
        }
        if (c != null) {
            next.complete(c);
        } else {
            connect().onComplete(next);
        }
        return true;
    }

    private Future<Connection> connect() {
        open++;
        Future<HttpClientConnection> connecting;
        try {
            connecting = client.connect(target);
        } catch (RuntimeException e) {
            // Vert.x may throw here instead of failing the future (a bad address): the request must still end.
            connecting = Future.failedFuture(e);
        }
        return connecting.map(http -> {
            Connection c = new Connection(http);
            http.closeHandler(v -> {
                if (!c.closed) {
                    c.closed = true;
                    open--;
                    serveWaiter(null);
                }
            });
            return c;
        }).onFailure(t -> {
            open--;
            serveWaiter(null); // the next waiter tries its own connection: each fails or succeeds on its own
        });
    }
}
