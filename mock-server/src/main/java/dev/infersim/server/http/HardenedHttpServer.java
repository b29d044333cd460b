package dev.infersim.server.http;

import dev.infersim.server.config.HttpTimeouts;
import dev.infersim.server.fleet.FrontDoor;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.routes.HttpApi;
import io.netty.handler.codec.TooLongFrameException;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;

import java.lang.invoke.MethodHandles;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP/1.1 server of every listener the mock runs, a replica's API ({@link HttpApi}) and a fleet's front door
 * ({@link FrontDoor}) alike, so both refuse and time out the same way: each connection has its keep-alive, header and
 * idle timeouts and counts against the process's descriptors ({@link ConnectionGuard}, {@link ConnectionBudget}); its
 * requests are framed strictly ({@link StrictRequestDecoder}: Content-Length with Transfer-Encoding, Transfer-Encoding
 * on HTTP/1.0, obsolete line folding refused); a request refused while being read is answered as error JSON with
 * {@code Connection: close} and the connection closes, nothing sent behind it read. HTTP/1.1 only, as vLLM's server: a
 * client offering a cleartext HTTP/2 upgrade (Java's HttpClient does by default) gets a plain HTTP/1.1 answer; with
 * the upgrade accepted, large responses such as /metrics stalled.
 */
public final class HardenedHttpServer {
    private HardenedHttpServer() {
    }

    /** A server on {@code vertx} handing each request to {@code handler}; the caller listens. */
    public static HttpServer create(Vertx vertx, HttpTimeouts timeouts, Handler<HttpServerRequest> handler) {
        return create(vertx, timeouts, handler, false);
    }

    /**
     * As {@link #create(Vertx, HttpTimeouts, Handler)}, with HTTP/2 cleartext also accepted when {@code h2c} (vLLM's
     * gRPC engine service on the HTTP port): an HTTP/2 connection has no HTTP/1.1 decoder to guard, so only its idle
     * timeout holds it.
     */
    public static HttpServer create(Vertx vertx, HttpTimeouts timeouts, Handler<HttpServerRequest> handler, boolean h2c) {
        HttpServerOptions options = new HttpServerOptions().setTcpNoDelay(true).setAcceptBacklog(4096)
                .setIdleTimeout((int) Math.min(Integer.MAX_VALUE, timeouts.idleMs())).setIdleTimeoutUnit(TimeUnit.MILLISECONDS)
                .setHttp2ClearTextEnabled(h2c);
        // what a new connection needs is loaded now: by the time one is set up the acceptor may have taken every
        // descriptor, and a class read from a directory (tests, an exploded deployment) could not be read then
        try {
            for (Class<?> c : new Class<?>[] {ConnectionBudget.class, ConnectionGuard.class, StrictRequestDecoder.class}) {
                MethodHandles.lookup().ensureInitialized(c);
            }
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        HttpServer server = vertx.createHttpServer(options);
        server.connectionHandler(c -> {
            if (ConnectionGuard.guards(c)) {
                ConnectionGuard.attach(vertx, c, options, timeouts, ConnectionBudget.PROCESS);
            }
        });
        return server.invalidRequestHandler(HardenedHttpServer::invalidRequest).requestHandler(request -> {
            ConnectionGuard guard = ConnectionGuard.of(request.connection());
            if (guard != null) {
                request.response().endHandler(v -> guard.requestEnded());
            }
            handler.handle(request);
        });
    }

    /**
     * A request the HTTP decoder refused (a control character in a header, a header or request line too long, a framing
     * {@link StrictRequestDecoder} refuses): error JSON with {@code Connection: close}, then the connection closes. Its
     * framing can no longer be trusted, and a client told to close does not send its next request on a connection
     * about to go away.
     */
    private static void invalidRequest(HttpServerRequest request) {
        Throwable cause = request.decoderResult().cause();
        String why = cause == null || cause.getMessage() == null ? "malformed request" : cause.getMessage();
        int status = 400;
        if (cause instanceof TooLongFrameException) {
            status = why.startsWith("An HTTP line is larger than") ? 414 : 431;
        }
        request.response().setStatusCode(status).putHeader("content-type", "application/json").putHeader("connection", "close")
                .end(ApiException.errorJson(status, "Invalid HTTP request: " + why, null))
                .onComplete(done -> request.connection().close());
    }
}
