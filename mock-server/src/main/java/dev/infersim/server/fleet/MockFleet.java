package dev.infersim.server.fleet;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.http.NetworkLogging;
import dev.infersim.server.json.Json;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.observe.ServerMetrics;
import dev.infersim.server.routes.FleetAdmin;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * N independent mock replicas in one process, replica i on {@code port + i} (or any free port when the base port is 0),
 * each with its own engine thread, KV cache, {@code /metrics}, {@code /health} and admin routes, as N vLLM pods behind
 * a gateway would be. The first replica also answers {@code GET|POST /admin/replicas}, which grows the fleet (new
 * replicas pay the cold start of {@link ServerOptions#startupDelay()}) or shrinks it (the highest-numbered replicas
 * drain: they refuse new requests, finish in-flight ones for up to the drain grace, then close their port). Replica 0
 * is never removed: it hosts the admin route.
 */
public final class MockFleet implements FleetAdmin {
    /** One process, one set of cores: more replicas than this would only share them thinner. */
    public static final int MAX_REPLICAS = 64;

    private final Vertx vertx;
    private final ServerOptions base;
    private final Duration drainGrace;
    private final Consumer<MockServer> onLoaded;
    private final List<MockServer> replicas = new ArrayList<>();
    /** Replicas draining, with the future of their close. */
    private final Map<MockServer, Future<Void>> draining = new java.util.LinkedHashMap<>();
    /** Per index, the close of the replica that last drained from it: a new one on the same fixed port waits for it. */
    private final Map<Integer, Future<Void>> portsFreed = new HashMap<>();
    private Future<Void> changes = Future.succeededFuture();
    private boolean closed;

    private MockFleet(Vertx vertx, ServerOptions base, Duration drainGrace, Consumer<MockServer> onLoaded) {
        this.vertx = vertx;
        this.base = base;
        this.drainGrace = drainGrace;
        this.onLoaded = onLoaded;
    }

    /**
     * Starts {@code replicas} replicas of {@code base} on a Vert.x of its own; {@code onLoaded} is told of each replica
     * (including later ones) once its model has loaded. Completes when all listen, loaded or not.
     */
    public static Future<MockFleet> start(ServerOptions base, int replicas, Duration drainGrace, Consumer<MockServer> onLoaded) {
        NetworkLogging.install();
        int loops = base.eventLoops() > 0 ? base.eventLoops() : Runtime.getRuntime().availableProcessors();
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops).setPreferNativeTransport(true));
        MockFleet fleet = new MockFleet(vertx, base, drainGrace, onLoaded);
        if (replicas < 1 || replicas > fleet.maxReplicas()) {
            vertx.close();
            return Future.failedFuture(new IllegalArgumentException("--replicas must be between 1 and " + fleet.maxReplicas()
                    + " (ports " + base.port() + "..65535), got " + replicas));
        }
        return fleet.scaleTo(replicas).map(v -> fleet).recover(e -> fleet.close(Duration.ZERO).transform(x -> Future.failedFuture(e)));
    }

    /** The Vert.x instance the replicas run on (a front door runs there too). */
    Vertx vertx() {
        return vertx;
    }

    /** The serving replicas (not the draining ones), by index. */
    public synchronized List<MockServer> replicas() {
        return List.copyOf(replicas);
    }

    public synchronized MockServer replica(int index) {
        for (MockServer s : replicas) {
            if (s.replica() == index) {
                return s;
            }
        }
        return null;
    }

    @Override
    public ModelService replicaModel(int index) {
        MockServer replica = replica(index);
        return replica == null ? null : replica.service();
    }

    @Override
    public synchronized List<ServerMetrics> metrics() {
        return replicas.stream().flatMap(s -> s.metrics().stream()).toList();
    }

    /** {@code http://host:port} of replica 0, where {@code /admin/replicas} lives. */
    public synchronized String baseUrl() {
        return replicas.get(0).baseUrl();
    }

    @Override
    public int maxReplicas() {
        return base.port() == 0 ? MAX_REPLICAS : Math.min(MAX_REPLICAS, 65536 - base.port());
    }

    /** Changes apply one after another in the order asked, so two quick POSTs cannot interleave their starts. */
    @Override
    public synchronized Future<Void> scaleTo(int n) {
        changes = changes.transform(ignored -> resize(n));
        return changes;
    }

    private Future<Void> resize(int n) {
        synchronized (this) {
            while (replicas.size() > n && replicas.size() > 1) {
                MockServer gone = replicas.remove(replicas.size() - 1);
                Future<Void> closed = gone.close(drainGrace).otherwiseEmpty();
                draining.put(gone, closed);
                portsFreed.put(gone.replica(), closed);
                closed.onComplete(ar -> {
                    synchronized (this) {
                        draining.remove(gone);
                    }
                });
            }
        }
        return grow(n);
    }

    /**
     * Starts replicas up to {@code n}, all or none: they join the fleet together once every one listens, and if one
     * cannot (its port is taken), those started for this change close again and the change fails with
     * {@link PortUnavailable} naming the port.
     */
    private Future<Void> grow(int n) {
        int first;
        synchronized (this) {
            if (closed) {
                return Future.failedFuture("the fleet is closing");
            }
            first = replicas.size();
        }
        List<MockServer> started = new ArrayList<>();
        Future<Void> chain = Future.succeededFuture();
        for (int index = first; index < n; index++) {
            int i = index;
            chain = chain.compose(v -> startReplica(i)).map(server -> {
                started.add(server);
                return null;
            });
        }
        return chain.transform(ar -> {
            synchronized (this) {
                if (ar.succeeded() && !closed) {
                    replicas.addAll(started);
                    started.forEach(server -> server.loaded().onSuccess(x -> onLoaded.accept(server)));
                    return Future.<Void>succeededFuture();
                }
            }
            Throwable cause = ar.failed() ? ar.cause() : new IllegalStateException("the fleet is closing");
            return Future.join(started.stream().map(s -> s.close(Duration.ZERO)).toList())
                    .transform(x -> Future.<Void>failedFuture(cause));
        });
    }

    private Future<MockServer> startReplica(int index) {
        Future<Void> portFree;
        synchronized (this) {
            portFree = portsFreed.getOrDefault(index, Future.succeededFuture());
        }
        int port = base.port() == 0 ? 0 : base.port() + index;
        return portFree.compose(v -> MockServer.start(vertx, base.forReplica(index, port), new RooflineCostModel(base.deployment()),
                        index == 0 ? this : null))
                .recover(e -> Future.failedFuture(listenFailure(e) ? new FleetAdmin.PortUnavailable(port, e) : e));
    }

    /** Whether a start failed at listening: Vert.x's native transport reports that as an IOException of its own. */
    private static boolean listenFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.io.IOException) {
                return true;
            }
        }
        return false;
    }

    @Override
    public synchronized ObjectNode describe() {
        ObjectNode o = Json.MAPPER.createObjectNode().put("replicas", replicas.size());
        int ready = 0;
        int loading = 0;
        for (MockServer s : replicas) {
            ready += s.state() == MockServer.State.READY ? 1 : 0;
            loading += s.state() == MockServer.State.LOADING ? 1 : 0;
        }
        o.put("ready", ready).put("loading", loading).put("draining", draining.size());
        ArrayNode endpoints = o.putArray("endpoints");
        List<MockServer> all = new ArrayList<>(replicas);
        all.addAll(draining.keySet());
        for (MockServer s : all) {
            ObjectNode e = endpoints.addObject().put("replica", s.replica());
            if (s.port() > 0) {
                e.put("url", s.baseUrl()).put("port", s.port());
            } else {
                e.putNull("url").putNull("port"); // an ephemeral port is known once the replica listens
            }
            e.put("state", s.state().wireName());
        }
        return o;
    }

    /** Drains every replica (in-flight requests get up to {@code grace}), then closes the Vert.x instance. */
    public Future<Void> close(Duration grace) {
        List<Future<Void>> closes = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (MockServer s : replicas) {
                closes.add(s.close(grace));
            }
            closes.addAll(draining.values());
            replicas.clear();
        }
        Promise<Void> done = Promise.promise();
        Future.join(closes).onComplete(ar -> vertx.close().onComplete(x -> done.complete()));
        return done.future();
    }
}
