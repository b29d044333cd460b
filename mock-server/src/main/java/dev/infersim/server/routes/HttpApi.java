package dev.infersim.server.routes;

import dev.infersim.common.ConfigException;
import dev.infersim.common.ReadLateness;
import dev.infersim.server.config.GrpcOptions;
import dev.infersim.server.config.HttpTimeouts;
import dev.infersim.server.engine.RealtimePriority;
import dev.infersim.server.http.HardenedHttpServer;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.observe.DashboardFeed;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.internal.ContextInternal;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.grpc.server.GrpcServer;

import java.util.concurrent.TimeUnit;

/**
 * The HTTP surface, as vLLM's OpenAI-compatible server exposes it: one Vert.x {@link Router} on which every request
 * first gets its id ({@link HttpBasics}), {@code /v1}, {@code /admin} and {@code /infersim} routes an API key check,
 * {@code /v1} the loading gate; then the inference routes ({@link OpenAiRoutes}) and the operations routes
 * ({@link AdminRoutes}); every refusal, down to a request the HTTP decoder cannot read, is OpenAI error JSON with the
 * matching status; the token-id routes of disaggregated serving ({@link TokenRoutes}) and, with {@code --grpc-port},
 * vLLM's gRPC engine service ({@link VllmGrpcService}). One instance per event loop; all share the {@link ModelService}.
 * With {@code --realtime-event-loops} each instance moves its loop to SCHED_FIFO ({@link RealtimePriority}) before it
 * listens, or fails the start saying why.
 */
public final class HttpApi extends VerticleBase {
    private static final String LARGE_BODY_WRITERS = "infersim-large-bodies";
    /** Writers of large responses at once; more wait their turn (a slow reader holds one as long as it reads). */
    private static final int LARGE_BODY_THREADS = 4;

    private final ModelService service;
    private final int port;
    private final HttpBasics.Shutdown shutdown;
    private final FleetAdmin fleet;
    private final DashboardFeed dashboard;
    private volatile int boundPort;
    private HttpServer server;
    /** The gRPC server on a port of its own ({@code --grpc-port N}); null otherwise. */
    private HttpServer grpcServer;
    private volatile int boundGrpcPort;
    /** Threads that write responses too large for an event loop (shared by name among a Vert.x's servers). */
    private WorkerExecutor bodies;

    /**
     * {@code fleet}: the replica set that {@code /admin/replicas} reports and resizes; null where this server has none.
     * {@code dashboard}: the feed of {@code /dashboard}; null when the dashboard is off.
     */
    public HttpApi(ModelService service, int port, HttpBasics.Shutdown shutdown, FleetAdmin fleet, DashboardFeed dashboard) {
        this.service = service;
        this.port = port;
        this.shutdown = shutdown;
        this.fleet = fleet;
        this.dashboard = dashboard;
    }

    public int boundPort() {
        return boundPort;
    }

    /** The port gRPC listens on: its own, or the HTTP port ({@code --grpc-port http}); 0 without gRPC. */
    public int boundGrpcPort() {
        GrpcOptions grpc = service.options.grpc();
        return grpc == null ? 0 : grpc.onHttpPort() ? boundPort : boundGrpcPort;
    }

    @Override
    public Future<?> start() {
        if (service.options.realtimeEventLoops()) {
            // start runs on the event loop that will read this instance's connections: that thread takes the class
            try {
                RealtimePriority.applyToCurrentThread(RealtimePriority.EVENT_LOOP_PRIORITY);
            } catch (IllegalStateException e) {
                return Future.failedFuture(new ConfigException("--realtime-event-loops: " + e.getMessage()));
            }
        }
        bodies = vertx.createSharedWorkerExecutor(LARGE_BODY_WRITERS, LARGE_BODY_THREADS);
        // start runs on this verticle's event loop: the read bound's accounts are that loop thread's own
        ReadLateness reads = new ReadLateness(System::nanoTime, ((ContextInternal) context).nettyEventLoop());
        reads.open(ReadLateness.ofCurrentThread());
        HttpBasics basics = new HttpBasics(service, () -> boundPort, reads);
        Router router = Router.router(vertx);
        router.route().handler(basics::assignRequestId);
        router.route("/v1/*").handler(basics::authenticate);
        router.route("/v1/*").handler(basics::refuseWhileLoading);
        router.route("/admin/*").handler(basics::authenticate);
        BodyHandler body = BodyHandler.create(false).setBodyLimit(service.options.maxBodyBytes());
        new OpenAiRoutes(vertx, service, shutdown, bodies).mount(router, body);
        new TokenRoutes(vertx, service, shutdown, basics).mount(router, body);
        new AdminRoutes(vertx, service, shutdown, basics, fleet, dashboard).mount(router, body);
        router.errorHandler(404, rc -> HttpBasics.error(rc, 404, "Not Found: " + rc.request().method() + " " + rc.request().path(), null));
        router.errorHandler(405, rc -> HttpBasics.error(rc, 405, "Method Not Allowed: " + rc.request().method() + " "
                + rc.request().path(), null));
        router.errorHandler(413, rc -> HttpBasics.error(rc, 413, "Request body larger than " + service.options.maxBodyBytes()
                + " bytes", null));
        router.errorHandler(400, rc -> HttpBasics.error(rc, 400, "Bad request", null));
        router.errorHandler(500, HttpBasics::failed);
        // With --grpc-port http, HTTP/2 cleartext is on for vLLM's gRPC engine service (see GrpcOptions for the cost).
        GrpcOptions grpcOptions = service.options.grpc();
        GrpcServer grpc = grpcOptions == null ? null : new VllmGrpcService(service, shutdown).server(vertx);
        boolean grpcHere = grpc != null && grpcOptions.onHttpPort();
        HttpTimeouts timeouts = service.options.timeouts();
        server = HardenedHttpServer.create(vertx, timeouts, !grpcHere ? router : request -> {
            if (VllmGrpcService.isGrpc(request)) {
                grpc.handle(request);
            } else {
                router.handle(request);
            }
        }, grpcHere);
        Future<?> http = server.listen(port, service.options.host()).onSuccess(s -> boundPort = s.actualPort());
        if (grpc == null || grpcHere) {
            return http;
        }
        // a port of its own: HTTP/2 only, as a gRPC server
        grpcServer = vertx.createHttpServer(new HttpServerOptions().setTcpNoDelay(true).setHttp2ClearTextEnabled(true)
                .setIdleTimeout((int) Math.min(Integer.MAX_VALUE, timeouts.idleMs())).setIdleTimeoutUnit(TimeUnit.MILLISECONDS));
        return Future.all(http, grpcServer.requestHandler(grpc).listen(grpcOptions.port(), service.options.host())
                .onSuccess(s -> boundGrpcPort = s.actualPort()));
    }

    /** By now every stream has ended (MockServer.close drains or aborts them first); idle keep-alive connections just close. */
    @Override
    public Future<?> stop() {
        Future<Void> grpcClosed = grpcServer == null ? Future.succeededFuture() : grpcServer.shutdown(200, TimeUnit.MILLISECONDS);
        return Future.all(server.shutdown(200, TimeUnit.MILLISECONDS), grpcClosed).eventually(() -> bodies.close());
    }
}
