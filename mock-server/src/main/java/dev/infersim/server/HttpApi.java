package dev.infersim.server;

import dev.infersim.common.ReadLateness;
import io.netty.handler.codec.TooLongFrameException;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.internal.ContextInternal;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP surface, as vLLM's OpenAI-compatible server exposes it: one Vert.x {@link Router} on which every request
 * first gets its id ({@link HttpBasics}), {@code /v1}, {@code /admin} and {@code /infersim} routes an API key check,
 * {@code /v1} the loading gate; then the inference routes ({@link OpenAiRoutes}) and the operations routes
 * ({@link AdminRoutes}); every refusal, down to a request the HTTP decoder cannot read, is OpenAI error JSON with the
 * matching status. One instance per event loop; all share the {@link ModelService}.
 */
final class HttpApi extends VerticleBase {
    static final String FAULT_HEADER = "x-infersim-fault";
    /**
     * Bodies larger than this are parsed and tokenized on a worker thread (about a millisecond of tokenizing), and
     * responses estimated larger are written by one ({@link ResponseOutputStream}).
     */
    static final int OFF_LOOP_BYTES = 64 * 1024;
    private static final String LARGE_BODY_WRITERS = "infersim-large-bodies";
    /** Writers of large responses at once; more wait their turn (a slow reader holds one as long as it reads). */
    private static final int LARGE_BODY_THREADS = 4;
    /** Names the replica that answered, so a test can see how a gateway spread its requests. */
    static final String REPLICA_HEADER = "x-infersim-replica";
    /** llm-d-inference-sim's headers naming the pod that answered (from POD_NAME, its port, POD_NAMESPACE). */
    static final String POD_HEADER = "x-inference-pod";
    static final String PORT_HEADER = "x-inference-port";
    static final String NAMESPACE_HEADER = "x-inference-namespace";
    /** vLLM's header that routes a request to one data-parallel rank. */
    static final String DP_RANK_HEADER = "x-data-parallel-rank";

    /** Whether the server is shutting down (new completions get 503). */
    interface Shutdown {
        boolean closing();
    }

    private final ModelService service;
    private final int port;
    private final Shutdown shutdown;
    private final FleetAdmin fleet;
    private final DashboardFeed dashboard;
    private volatile int boundPort;
    private HttpServer server;
    /** Each open connection's timeouts; this verticle's event loop only. */
    private final Map<HttpConnection, ConnectionGuard> guards = new HashMap<>();
    /** Threads that write responses too large for an event loop (shared by name among a Vert.x's servers). */
    private WorkerExecutor bodies;

    /**
     * {@code fleet}: the replica set that {@code /admin/replicas} reports and resizes; null where this server has none.
     * {@code dashboard}: the feed of {@code /dashboard}; null when the dashboard is off.
     */
    HttpApi(ModelService service, int port, Shutdown shutdown, FleetAdmin fleet, DashboardFeed dashboard) {
        this.service = service;
        this.port = port;
        this.shutdown = shutdown;
        this.fleet = fleet;
        this.dashboard = dashboard;
    }

    int boundPort() {
        return boundPort;
    }

    @Override
    public Future<?> start() {
        bodies = vertx.createSharedWorkerExecutor(LARGE_BODY_WRITERS, LARGE_BODY_THREADS);
        // start runs on this verticle's event loop: the read bound's accounts are that loop thread's own
        ReadLateness reads = new ReadLateness(System::nanoTime, ((ContextInternal) context).nettyEventLoop());
        reads.open(ReadLateness.ofCurrentThread());
        HttpBasics basics = new HttpBasics(service, guards::get, () -> boundPort, reads);
        Router router = Router.router(vertx);
        router.route().handler(basics::assignRequestId);
        router.route("/v1/*").handler(basics::authenticate);
        router.route("/v1/*").handler(basics::refuseWhileLoading);
        router.route("/admin/*").handler(basics::authenticate);
        BodyHandler body = BodyHandler.create(false).setBodyLimit(service.options.maxBodyBytes());
        new OpenAiRoutes(vertx, service, shutdown, bodies).mount(router, body);
        new AdminRoutes(vertx, service, shutdown, basics, fleet, dashboard).mount(router, body);
        router.errorHandler(404, rc -> HttpBasics.error(rc, 404, "Not Found: " + rc.request().method() + " " + rc.request().path(), null));
        router.errorHandler(405, rc -> HttpBasics.error(rc, 405, "Method Not Allowed: " + rc.request().method() + " "
                + rc.request().path(), null));
        router.errorHandler(413, rc -> HttpBasics.error(rc, 413, "Request body larger than " + service.options.maxBodyBytes()
                + " bytes", null));
        router.errorHandler(400, rc -> HttpBasics.error(rc, 400, "Bad request", null));
        router.errorHandler(500, HttpBasics::failed);
        // HTTP/1.1 only, as vLLM's server: a client offering a cleartext HTTP/2 upgrade (Java's HttpClient does by
        // default) gets a plain HTTP/1.1 answer; with the upgrade accepted, large responses such as /metrics stalled.
        HttpTimeouts timeouts = service.options.timeouts();
        HttpServerOptions options = new HttpServerOptions().setTcpNoDelay(true).setAcceptBacklog(4096)
                .setIdleTimeout((int) Math.min(Integer.MAX_VALUE, timeouts.idleMs())).setIdleTimeoutUnit(TimeUnit.MILLISECONDS)
                .setHttp2ClearTextEnabled(false);
        server = vertx.createHttpServer(options);
        server.connectionHandler(c -> guards.put(c, ConnectionGuard.attach(vertx, c, options, timeouts, () -> guards.remove(c))));
        return server.requestHandler(router).invalidRequestHandler(HttpApi::invalidRequest).listen(port, service.options.host())
                .onSuccess(s -> boundPort = s.actualPort());
    }

    /** By now every stream has ended (MockServer.close drains or aborts them first); idle keep-alive connections just close. */
    @Override
    public Future<?> stop() {
        return server.shutdown(200, TimeUnit.MILLISECONDS).eventually(() -> bodies.close());
    }

    /**
     * A request the HTTP decoder refused (a control character in a header, a header or request line too long): error
     * JSON with {@code Connection: close}, then the connection closes. Its framing can no longer be trusted, and a
     * client told to close does not send its next request on a connection about to go away.
     */
    private static void invalidRequest(HttpServerRequest request) {
        Throwable cause = request.decoderResult().cause();
        String why = cause == null || cause.getMessage() == null ? "malformed request" : cause.getMessage();
        int status = 400;
        if (cause instanceof TooLongFrameException) {
            status = why.startsWith("An HTTP line is larger than") ? 414 : 431;
        }
        request.response().setStatusCode(status).putHeader("content-type", "application/json").putHeader("connection", "close")
                .end(HttpBasics.errorJson(status, "Invalid HTTP request: " + why, null))
                .onComplete(done -> request.connection().close());
    }
}
