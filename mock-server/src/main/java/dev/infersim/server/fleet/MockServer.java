package dev.infersim.server.fleet;

import dev.infersim.common.NanoClock;
import dev.infersim.engine.CostModel;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.engine.SchedulingPolicies;
import dev.infersim.server.config.FaultSettings;
import dev.infersim.server.config.KvTransferConfig;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.engine.EngineLoop;
import dev.infersim.server.engine.KvTransferConnector;
import dev.infersim.server.engine.ModelClock;
import dev.infersim.server.http.NetworkLogging;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.observe.DashboardFeed;
import dev.infersim.server.observe.ServerMetrics;
import dev.infersim.server.routes.AdminRoutes;
import dev.infersim.server.routes.FleetAdmin;
import dev.infersim.server.routes.HttpApi;
import dev.infersim.server.routes.HttpBasics;
import dev.infersim.server.routes.OpenAiRoutes;
import dev.infersim.server.routes.VllmGrpcService;
import dev.infersim.server.text.DatasetReplies;
import dev.infersim.server.text.LoremVocabulary;
import dev.infersim.server.text.PromptTokenizer;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * An OpenAI-compatible LLM server whose every token is timed by the engine model ({@link EngineCore}) on the real
 * clock: one engine thread per served model, Vert.x event loops for HTTP. Start it in-process:
 * <pre>
 *   MockServer server = MockServer.start(ServerOptions.builder(deployment).port(0).timeScale(10).build())
 *           .toCompletionStage().toCompletableFuture().join();
 *   String baseUrl = server.baseUrl() + "/v1";
 *   ...
 *   server.close().await();
 * </pre>
 * See {@link OpenAiRoutes} and {@link AdminRoutes} for the endpoints and {@link ModelClock} for model time versus wall
 * time.
 */
public final class MockServer {
    private final Vertx vertx;
    private final boolean ownsVertx;
    private final ModelService service;
    private final FleetAdmin fleet;
    private final DashboardFeed dashboard;
    private volatile List<String> deployments = List.of();
    /** The bound port; 0 until the server listens (a fixed port is known from the start). */
    private volatile int port;
    /** The port vLLM's gRPC engine service listens on ({@code --grpc-port}); 0 without it or until listening. */
    private volatile int grpcPort;
    private final Promise<Void> loaded = Promise.promise();
    private volatile long loadTimer = -1;
    private volatile boolean closing;
    private Future<Void> closed;

    private MockServer(Vertx vertx, boolean ownsVertx, ModelService service, FleetAdmin fleet, DashboardFeed dashboard) {
        this.vertx = vertx;
        this.ownsVertx = ownsVertx;
        this.service = service;
        this.fleet = fleet;
        this.dashboard = dashboard;
        this.port = service.options.port();
    }

    /** Where a replica stands: loading its model, ready to serve, or draining before it closes. */
    public enum State {
        LOADING, READY, DRAINING;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Starts on its own Vert.x instance (closed by {@link #close()}), with the roofline cost model. */
    public static Future<MockServer> start(ServerOptions options) {
        return start(options, NanoClock.SYSTEM);
    }

    /** As {@link #start(ServerOptions)}, timed by {@code clock} (tests pass a virtual one). */
    public static Future<MockServer> start(ServerOptions options, NanoClock clock) {
        NetworkLogging.install();
        int loops = options.eventLoops() > 0 ? options.eventLoops() : Runtime.getRuntime().availableProcessors();
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops).setPreferNativeTransport(true));
        return start(vertx, true, options, new RooflineCostModel(options.deployment()), null, clock)
                .onFailure(e -> vertx.close());
    }

    /** Starts on a caller's Vert.x (left open by {@link #close()}) with a given cost model (tests may use their own). */
    public static Future<MockServer> start(Vertx vertx, ServerOptions options, CostModel costModel) {
        return start(vertx, false, options, costModel, null, NanoClock.SYSTEM);
    }

    /** As above, with {@code /admin/replicas} answered by {@code fleet} (null: no such route). */
    static Future<MockServer> start(Vertx vertx, ServerOptions options, CostModel costModel, FleetAdmin fleet) {
        return start(vertx, false, options, costModel, fleet, NanoClock.SYSTEM);
    }

    private static Future<MockServer> start(Vertx vertx, boolean owns, ServerOptions options, CostModel costModel,
                                            FleetAdmin fleet, NanoClock clock) {
        NetworkLogging.install();
        ModelService service;
        try {
            KvCapacity kv = KvCapacity.of(options.deployment());
            List<EngineCore> engines = new java.util.ArrayList<>();
            for (int rank = 0; rank < options.dataParallelSize(); rank++) {
                engines.add(options.fixedTiming() != null
                        ? EngineCore.fixed(options.deployment(), kv, SchedulingPolicies.byName(options.schedulingPolicy()),
                                options.fixedTiming(), options.seed() + (long) options.replica() * options.dataParallelSize() + rank)
                        : new EngineCore(options.deployment(), kv, costModel, SchedulingPolicies.byName(options.schedulingPolicy())));
            }
            PromptTokenizer tokenizer = options.tokenizer() != null ? options.tokenizer() : new PromptTokenizer();
            // lorem output is cl100k_base words whatever the prompt's tokenizer: its ids never reach the engine's cache
            service = new ModelService(options, engines, tokenizer, new LoremVocabulary(new PromptTokenizer()), clock);
            startEngines(service);
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        // a fleet's first replica shows every replica; any other server, itself
        DashboardFeed dashboard = !options.dashboard() ? null
                : new DashboardFeed(fleet != null ? fleet::metrics : () -> service.metrics, System.nanoTime());
        MockServer server = new MockServer(vertx, owns, service, fleet, dashboard);
        if (service.kvConnector == null) {
            return server.listenOrLoad();
        }
        // the KV connector's side channels listen first: a decode side may notify a prefill as soon as it answers
        return service.kvConnector.start(vertx, service.loops)
                .recover(e -> {
                    stopEngines(service);
                    return service.kvConnector.close().transform(ar -> Future.<Void>failedFuture(e));
                })
                .compose(v -> server.listenOrLoad().onFailure(e -> service.kvConnector.close()));
    }

    /** Listens now, or (as vLLM) only once the cold start is over. */
    private Future<MockServer> listenOrLoad() {
        MockServer server = this;
        ServerOptions options = service.options;
        long loadWallMs = Math.round(options.startupDelay().totalNanos() / options.timeScale() / 1e6);
        if (loadWallMs <= 0 || options.listenWhileLoading()) {
            return server.listen().map(v -> {
                server.beginLoading(loadWallMs);
                return server;
            }).onFailure(e -> stopEngines(service));
        }
        // As vLLM: nothing listens while the model loads, so connections are refused until it has.
        try {
            server.checkPortFree();
        } catch (RuntimeException e) {
            stopEngines(service);
            return Future.failedFuture(e);
        }
        server.loadTimer = vertx.setTimer(loadWallMs, t -> server.listenLoaded());
        return Future.succeededFuture(server);
    }

    /**
     * Deploys one {@link HttpApi} per event loop on the port: Vert.x shares the listening socket among them (even an
     * ephemeral port 0). Completes once it listens, with the port known.
     */
    private Future<Void> listen() {
        ServerOptions options = service.options;
        int instances = options.eventLoops() > 0 ? options.eventLoops() : Runtime.getRuntime().availableProcessors();
        HttpBasics.Shutdown shutdown = () -> closing;
        List<HttpApi> apis = new java.util.concurrent.CopyOnWriteArrayList<>();
        return vertx.deployVerticle(() -> {
            HttpApi api = new HttpApi(service, options.port(), shutdown, fleet, dashboard);
            apis.add(api);
            return api;
        }, new DeploymentOptions().setInstances(instances)).map(id -> {
            deployments = List.of(id);
            port = apis.get(0).boundPort();
            grpcPort = apis.get(0).boundGrpcPort();
            service.listening(port);
            return null;
        });
    }

    /** The cold start is over: listen now (unless the server closed meanwhile), then count as loaded. */
    private void listenLoaded() {
        synchronized (this) {
            if (closing) {
                return;
            }
        }
        listen().onSuccess(v -> markLoaded()).onFailure(loaded::tryFail);
    }

    /** A fixed port that cannot be bound now fails the start at once, not only once the model has loaded. */
    private void checkPortFree() {
        if (service.options.port() == 0) {
            return;
        }
        try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(new java.net.InetSocketAddress(service.options.host(), service.options.port()));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void startEngines(ModelService service) {
        for (EngineLoop loop : service.loops) {
            try {
                loop.start();
            } catch (RuntimeException e) {
                stopEngines(service);
                throw e;
            }
        }
    }

    private static void stopEngines(ModelService service) {
        try {
            for (EngineLoop loop : service.loops) {
                loop.stop();
            }
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The cold start runs on the wall clock: {@link ServerOptions#startupDelay()} model time is delay / time scale of
     * wall time, after which /health and /v1 serve (here the server already listens and answers 503 meanwhile).
     */
    private void beginLoading(long wallMs) {
        if (wallMs <= 0) {
            markLoaded();
        } else {
            loadTimer = vertx.setTimer(wallMs, t -> markLoaded());
        }
    }

    private void markLoaded() {
        service.loaded = true;
        loaded.tryComplete();
    }

    /**
     * Completes when the model has loaded and the server answers /health with 200 (at once without a startup delay);
     * fails if the port cannot be bound then.
     */
    public Future<Void> loaded() {
        return loaded.future();
    }

    public State state() {
        return closing ? State.DRAINING : service.loaded ? State.READY : State.LOADING;
    }

    /** This server's index in its fleet. */
    public int replica() {
        return service.options.replica();
    }

    /** The served model behind this server (its settings, engines and metrics). */
    ModelService service() {
        return service;
    }

    /** This server's metrics, one per data-parallel engine, for a fleet's dashboard. */
    List<ServerMetrics> metrics() {
        return service.metrics;
    }

    /** The bound TCP port; 0 while a server on an ephemeral port loads without listening. */
    public int port() {
        return port;
    }

    /** The port of vLLM's gRPC engine service: its own, or {@link #port()} with {@code --grpc-port http}; 0 without. */
    public int grpcPort() {
        return grpcPort;
    }

    /** {@code http://host:port} (append {@code /v1} for OpenAI clients). */
    public String baseUrl() {
        String host = service.options.host();
        // An IPv6 literal needs brackets in a URL, else its colons swallow the port (RFC 3986, section 3.2.2).
        boolean ipv6Literal = host.indexOf(':') >= 0 && !host.startsWith("[");
        return "http://" + (ipv6Literal ? "[" + host + "]" : host) + ":" + port;
    }

    public ServerOptions options() {
        return service.options;
    }

    public KvCapacity capacity() {
        return service.capacity;
    }

    /** Model time versus wall time of this server. */
    public ModelClock clock() {
        return service.clock;
    }

    /** Requests in the running batch after the last step. */
    public int runningRequests() {
        return service.running();
    }

    /** Requests accepted but not running (engine queue, preempted, or not yet handed to the engine). */
    public int waitingRequests() {
        return service.waiting();
    }

    /** Completion requests handed to the engine and not yet answered in full. */
    public int requestsInFlight() {
        return service.activeExchanges.get();
    }

    /** Fraction of KV-cache blocks in use after the last step, the mean over data-parallel engines. */
    public double kvCacheUsage() {
        double sum = 0;
        for (ServerMetrics m : service.metrics) {
            sum += m.kvUsage();
        }
        return sum / service.metrics.size();
    }

    /** A copy of the step-lag histogram (wall ns by which steps ended after their planned end), all engines together. */
    public Histogram stepLagNanos() {
        Histogram all = service.metrics.get(0).stepLagNanos.copy();
        for (int i = 1; i < service.metrics.size(); i++) {
            all.add(service.metrics.get(i).stepLagNanos);
        }
        return all;
    }

    /** The current fault settings. */
    public FaultSettings faults() {
        return service.faults();
    }

    /** The KV connector's engine ids and side-channel ports, by data-parallel rank; null without one. */
    public List<String> kvEngineIds() {
        if (service.kvConnector == null) {
            return null;
        }
        List<String> ids = new java.util.ArrayList<>();
        for (int rank = 0; rank < service.loops.size(); rank++) {
            ids.add(service.kvConnector.engineId(rank));
        }
        return ids;
    }

    /** The one line {@code infersim serve} prints when ready. */
    public String readyLine() {
        var d = service.options.deployment();
        KvCapacity kv = service.capacity;
        String loadedIn = service.options.startupDelay().isNone() ? "" : ", loaded in " + service.options.startupDelay();
        String dp = service.loops.size() > 1 ? " x" + service.loops.size() + " data parallel" : "";
        return String.format(Locale.ROOT, "infersim serving %s at %s/v1 (replica %d, %s on %s x%d%s, time scale %s%s); KV cache "
                        + "%,d tokens (%,d blocks of %d), max model len %,d", service.options.servedModelName(), baseUrl(),
                replica(), d.model().name(), d.gpu().name(), d.tensorParallelSize(), dp, service.options.timeScale(), loadedIn,
                kv.tokens(), kv.numBlocks(), kv.blockSize(), kv.maxModelLen()) + timingNote(service.options.fixedTiming(), d.maxNumSeqs())
                + kvTransferNote() + (grpcPort > 0 ? "; gRPC " + VllmGrpcService.NAME.fullyQualifiedName() + " on port " + grpcPort : "")
                + datasetNote();
    }

    private String datasetNote() {
        DatasetReplies d = service.options.datasetReplies();
        return d == null ? "" : String.format(Locale.ROOT, "; replies from %s (%,d for %,d prompts)", d.source(), d.size(),
                d.prompts());
    }

    private String kvTransferNote() {
        KvTransferConnector c = service.kvConnector;
        if (c == null) {
            return "";
        }
        return String.format(Locale.ROOT, "; %s %s, engine_id %s, side channel %s:%d, KV pulls at %s GB/s + %s ms", KvTransferConfig.CONNECTOR,
                c.config().kvRole(), c.engineId(0), c.config().sideChannelHost(), c.port(0), c.config().link().gbps(),
                c.config().link().latencyMs());
    }

    private static String timingNote(FixedTiming t, int maxNumSeqs) {
        if (t == null) {
            return "";
        }
        return String.format(Locale.ROOT, "; fixed timing: TTFT %s ms, ITL %s ms, up to %d requests at once", t.timeToFirstTokenMs(),
                t.interTokenLatencyMs(), maxNumSeqs);
    }

    /** Graceful close with a 5 s grace period. */
    public Future<Void> close() {
        return close(Duration.ofSeconds(5));
    }

    /**
     * Stops accepting requests (new ones get 503), lets in-flight requests finish for up to {@code grace} (wall), then
     * aborts the rest (streams end with finish_reason {@code abort} and {@code [DONE]}) and closes the listeners.
     * Closing again returns the first close's future.
     */
    public synchronized Future<Void> close(Duration grace) {
        if (closed != null) {
            return closed;
        }
        closing = true;
        if (loadTimer >= 0) {
            vertx.cancelTimer(loadTimer);
        }
        loaded.tryFail("closed while loading");
        Promise<Void> drained = Promise.promise();
        awaitDrained(System.nanoTime() + grace.toNanos(), drained);
        closed = drained.future()
                .compose(v -> vertx.executeBlocking(() -> {
                    stopEngines(service);
                    return null;
                }))
                .compose(v -> {
                    Promise<Void> flushed = Promise.promise();
                    vertx.setTimer(50, t -> flushed.complete());
                    return flushed.future();
                })
                .compose(v -> Future.join(deployments.stream().map(vertx::undeploy).toList()).mapEmpty())
                .compose(v -> service.kvConnector == null ? Future.<Void>succeededFuture() : service.kvConnector.close())
                .compose(v -> ownsVertx ? vertx.close() : Future.<Void>succeededFuture());
        return closed;
    }

    /**
     * Completes {@code drained} once no exchange is active or the deadline has passed, checking every 10 ms with one-shot
     * timers. A periodic timer cancelled from its own tick could fail inside Vert.x (a NullPointerException when the
     * tick ran before the closing thread had stored the timer's future), and then close() never completed.
     */
    private void awaitDrained(long deadline, Promise<Void> drained) {
        if (service.activeExchanges.get() == 0 || System.nanoTime() >= deadline) {
            drained.complete();
        } else {
            vertx.setTimer(10, t -> awaitDrained(deadline, drained));
        }
    }
}
