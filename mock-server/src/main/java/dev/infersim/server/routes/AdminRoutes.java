package dev.infersim.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.config.FaultSettings;
import dev.infersim.server.config.RuntimeConfig;
import dev.infersim.server.engine.EngineLoop;
import dev.infersim.server.engine.LoraAdapters;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.json.JsonFields;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.observe.Dashboard;
import dev.infersim.server.observe.DashboardFeed;
import dev.infersim.server.observe.FakeMetrics;
import dev.infersim.server.observe.RuntimeMetrics;
import dev.infersim.server.observe.ServerMetrics;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.server.request.RequestParser;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The operations routes: vLLM's {@code GET /health}, {@code GET /version}, {@code GET /metrics},
 * {@code POST /v1/load_lora_adapter} and {@code /v1/unload_lora_adapter} (with runtime LoRA updating on),
 * {@code POST /reset_prefix_cache} (in development mode) and the sleep routes ({@link SleepRoutes}); llm-d-inference-sim's
 * {@code GET /health/ready}; and infersim's own: {@code GET|POST /admin/faults}, {@code GET|POST /admin/replicas} (on a
 * fleet), {@code GET /infersim/truth} (with a truth log) and the dashboard ({@link Dashboard}). One instance per event
 * loop.
 */
public final class AdminRoutes {
    /** Most truth rows one GET returns (a page is built on the event loop). */
    private static final int TRUTH_PAGE_ROWS = 10_000;

    private final Vertx vertx;
    private final ModelService service;
    private final HttpBasics.Shutdown shutdown;
    private final HttpBasics basics;
    /** The replica set that {@code /admin/replicas} reports and resizes; null where this server has none. */
    private final FleetAdmin fleet;
    /** The feed of {@code /dashboard}; null when the dashboard is off. */
    private final DashboardFeed dashboard;

    AdminRoutes(Vertx vertx, ModelService service, HttpBasics.Shutdown shutdown, HttpBasics basics, FleetAdmin fleet,
                DashboardFeed dashboard) {
        this.vertx = vertx;
        this.service = service;
        this.shutdown = shutdown;
        this.basics = basics;
        this.fleet = fleet;
        this.dashboard = dashboard;
    }

    void mount(Router router, BodyHandler body) {
        if (service.options.features().sleepRoutes()) {
            SleepRoutes.mount(router, service);
        }
        router.get("/health").handler(this::health);
        router.get("/health/ready").handler(this::ready);
        router.get("/version").handler(rc -> HttpBasics.json(rc, Json.MAPPER.createObjectNode().put("version", VLLM_VERSION)
                .put("infersim_version", version())));
        router.get("/metrics").handler(rc -> rc.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
                .end(ServerMetrics.render(service.shownMetrics(), service.options.metrics().legacy()) + loraMetrics()
                        + truthLogMetrics() + service.runtime.get().metrics(service.options.replica())
                        + (service.kvConnector == null ? "" : service.kvConnector.renderMetrics())
                        + RuntimeMetrics.scrape()));
        if (service.options.runtimeLoraUpdating()) {
            router.post("/v1/load_lora_adapter").handler(body).handler(rc -> updateLoras(rc, true));
            router.post("/v1/unload_lora_adapter").handler(body).handler(rc -> updateLoras(rc, false));
        }
        if (dashboard != null) {
            Dashboard.mountLive(vertx, router, dashboard);
        }
        if (service.options.features().devMode()) {
            // vLLM mounts its development routes only under VLLM_SERVER_DEV_MODE=1 (vllm/entrypoints/serve/cache/api_router.py)
            router.post("/reset_prefix_cache").handler(basics::refuseWhileLoading).handler(this::resetPrefixCache);
        }
        router.get("/admin/faults").handler(rc -> HttpBasics.json(rc, faultsJson(service.faults())));
        router.post("/admin/faults").handler(body).handler(this::setFaults);
        router.get("/admin/config").handler(this::config);
        router.post("/admin/config").handler(body).handler(this::reconfigure);
        if (service.options.truthLog() != null) {
            router.route("/infersim/*").handler(basics::authenticate);
            router.get("/infersim/truth").handler(this::truth);
        }
        if (fleet != null) {
            router.get("/admin/replicas").handler(rc -> HttpBasics.json(rc, fleet.describe()));
            router.post("/admin/replicas").handler(body).handler(rc -> resize(rc, fleet, fleet::describe));
        }
    }

    /**
     * vLLM's {@code /health} ({@code vllm/entrypoints/serve/instrumentator/health.py}): 200 while the engine lives, so
     * also while in-flight requests drain after SIGTERM (the server stops listening once they have); 503 once it has
     * stopped ({@link EngineLoop#deathCause}; vLLM's answer to EngineDeadError). With
     * {@code listenWhileLoading}, 503 while the model loads and once shutdown began, so a readiness probe keeps traffic
     * away exactly while requests would get 503.
     */
    private void health(RoutingContext rc) {
        if (service.engineStopped()) {
            HttpBasics.error(rc, 503, "The engine has stopped", null); // vLLM: 503 on EngineDeadError
        } else if (shutdown.closing() && service.options.listenWhileLoading()) {
            HttpBasics.error(rc, 503, "The server is shutting down", null);
        } else if (!service.loaded) {
            HttpBasics.error(rc, 503, basics.loadingMessage(), null);
        } else {
            rc.response().end();
        }
    }

    /** llm-d-inference-sim's {@code /health/ready}: 503 until the cold start is over, then 200. */
    private void ready(RoutingContext rc) {
        rc.response().putHeader("content-type", "application/json").setStatusCode(service.loaded ? 200 : 503).end();
    }

    /**
     * The vLLM release the mock answers as on {@code /version} ({@code {"version": VLLM_VERSION}}, vLLM's
     * {@code vllm/entrypoints/serve/instrumentator/basic.py}): v0.26.0, the newest release when the interfaces cited
     * across this package were last checked. A client parses it as a vLLM version (PEP 440), so infersim's own
     * version goes beside it as {@code infersim_version}, never in its place.
     */
    public static final String VLLM_VERSION = "0.26.0";

    private static String version() {
        String v = AdminRoutes.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }

    private String truthLogMetrics() {
        return service.options.truthLog() == null ? "" : service.options.truthLog().metrics();
    }

    private String loraMetrics() {
        FakeMetrics fake = service.runtime.get().parsedFakeMetrics();
        if (service.loraStates == null && (fake == null || fake.loras().isEmpty())) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        if (fake != null) {
            fake.renderLoras(b, service.options.deployment().lora() == null ? 0 : service.options.deployment().lora().maxLoras());
        } else {
            service.loraStates.render(b);
        }
        return b.toString();
    }

    /**
     * vLLM's {@code POST /v1/load_lora_adapter {"lora_name", "lora_path"}} and {@code /v1/unload_lora_adapter
     * {"lora_name"}}: 200 with a plain-text success line, or error JSON with vLLM's message, type and status.
     */
    private void updateLoras(RoutingContext rc, boolean load) {
        try {
            JsonFields body = JsonFields.of(RequestParser.object(bodyBytes(rc)));
            if (service.loras == null) {
                throw ApiException.badRequest(null, "LoRA is not enabled. Use --enable-lora to enable LoRA.");
            }
            String name = body.optString("lora_name");
            String message;
            if (load) {
                service.registerLora(service.loras.load(name, body.optString("lora_path")).adapter().id());
                message = "Success: LoRA adapter '" + name + "' added successfully.";
            } else {
                int id = service.loras.unload(name).adapter().id();
                for (EngineLoop loop : service.loops) {
                    loop.unloadLora(id);
                }
                message = "Success: LoRA adapter '" + name + "' removed successfully.";
            }
            rc.response().putHeader("content-type", "text/plain; charset=utf-8").end(message);
        } catch (LoraAdapters.LoraException e) {
            rc.response().setStatusCode(e.status).putHeader("content-type", "application/json")
                    .end(ApiException.errorJson(e.status, e.getMessage(), null, e.type));
        } catch (ApiException e) {
            HttpBasics.error(rc, e.status, e.getMessage(), e.param);
        }
    }

    /**
     * vLLM's {@code POST /reset_prefix_cache?reset_running_requests=BOOL&reset_external=BOOL}
     * ({@code vllm/entrypoints/serve/cache/api_router.py}): every engine forgets its cached prefix blocks between two
     * steps and publishes {@code AllBlocksCleared}; 200 with an empty body, or 409 when a request still held KV blocks
     * and {@code reset_running_requests} was false (with it true, running requests are preempted by recompute first).
     * There is no external (connector) cache to reset.
     */
    private void resetPrefixCache(RoutingContext rc) {
        boolean preemptRunning;
        try {
            preemptRunning = queryBool(rc, "reset_running_requests");
            queryBool(rc, "reset_external");
        } catch (ApiException e) {
            HttpBasics.error(rc, e.status, e.getMessage(), e.param);
            return;
        }
        List<CompletableFuture<Boolean>> resets = new ArrayList<>();
        for (EngineLoop loop : service.loops) {
            resets.add(loop.resetPrefixCache(preemptRunning));
        }
        Context context = vertx.getOrCreateContext();
        CompletableFuture.allOf(resets.toArray(CompletableFuture[]::new))
                .whenComplete((v, e) -> context.runOnContext(x -> {
                    if (resets.stream().allMatch(f -> f.getNow(false))) {
                        rc.response().end();
                    } else {
                        HttpBasics.error(rc, 409, "Prefix cache reset failed.", null);
                    }
                }));
    }

    /** A query flag read as pydantic reads a bool (true/false, 1/0, yes/no, on/off, t/f, y/n); absent is false. */
    private static boolean queryBool(RoutingContext rc, String name) {
        String v = rc.request().getParam(name);
        if (v == null) {
            return false;
        }
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on", "t", "y" -> true;
            case "false", "0", "no", "off", "f", "n" -> false;
            default -> throw ApiException.badRequest(name, name + ": Input should be a valid boolean, unable to interpret input, got " + v);
        };
    }

    /**
     * {@code POST /admin/replicas {"replicas": N}}: resizes {@code fleet} and answers {@code describe}'s JSON once the
     * new replicas have started; a bad body is 400 with OpenAI error JSON. Shared with the front door.
     */
    public static void resize(RoutingContext rc, FleetAdmin fleet, Supplier<ObjectNode> describe) {
        try {
            JsonFields body = JsonFields.of(RequestParser.object(bodyBytes(rc)));
            rejectUnknown(body.object(), List.of("replicas"));
            Integer n = body.optInt("replicas", 1, fleet.maxReplicas());
            if (n == null) {
                throw ApiException.badRequest("replicas", "replicas: field required (an integer from 1 to " + fleet.maxReplicas() + ")");
            }
            fleet.scaleTo(n).onComplete(ar -> {
                if (ar.succeeded()) {
                    HttpBasics.json(rc, describe.get());
                } else if (ar.cause() instanceof FleetAdmin.PortUnavailable taken) {
                    // nothing changed: the replicas started for this request closed again
                    HttpBasics.error(rc, 409, "Scaling to " + n + " replicas failed, the fleet is unchanged: " + taken.getMessage(), "replicas");
                } else {
                    HttpBasics.error(rc, 500, "Scaling to " + n + " replicas failed: " + ar.cause().getMessage(), "replicas");
                }
            });
        } catch (ApiException e) {
            HttpBasics.error(rc, e.status, e.getMessage(), e.param);
        }
    }

    /** {@code POST /admin/faults}: fields left out keep their value; answers the settings now in force. */
    private void setFaults(RoutingContext rc) {
        try {
            ObjectNode update = RequestParser.object(bodyBytes(rc));
            RuntimeConfig[] change = service.reconfigure(update, RuntimeConfig.FAULT_KEYS);
            log(service, "/admin/faults", change);
            HttpBasics.json(rc, faultsJson(change[1].faults()));
        } catch (ApiException e) {
            HttpBasics.error(rc, e.status, e.getMessage(), e.param);
        }
    }

    /**
     * {@code GET /admin/config}: the settings that change at run time ({@link RuntimeConfig}); on a fleet's first port
     * {@code ?replica=N} reads replica N's.
     */
    private void config(RoutingContext rc) {
        try {
            ModelService target = target(rc);
            HttpBasics.json(rc, target.runtime.get().toJson().put("replica", target.options.replica()));
        } catch (ApiException e) {
            HttpBasics.error(rc, e.status, e.getMessage(), e.param);
        }
    }

    /**
     * {@code POST /admin/config}: a partial update, every field checked before any applies (400 naming the first bad
     * one, nothing changed); answers the settings now in force. The change is logged and shows in /metrics
     * ({@code infersim:config_*}); the engines take a new speed or fixed timing from their next step.
     */
    private void reconfigure(RoutingContext rc) {
        try {
            ModelService target = target(rc);
            ObjectNode update = RequestParser.object(bodyBytes(rc));
            RuntimeConfig[] change = target.reconfigure(update, target.runtime.get().keys());
            log(target, "/admin/config", change);
            HttpBasics.json(rc, change[1].toJson().put("replica", target.options.replica()));
        } catch (ApiException e) {
            HttpBasics.error(rc, e.status, e.getMessage(), e.param);
        }
    }

    /** This server, or with {@code ?replica=N} on a fleet's first port replica N (404 for none such). */
    private ModelService target(RoutingContext rc) {
        String replica = rc.request().getParam("replica");
        if (replica == null || replica.equals(Integer.toString(service.options.replica()))) {
            return service;
        }
        int n;
        try {
            n = Integer.parseInt(replica.trim());
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("replica", "replica: expected a replica index, got '" + replica + "'");
        }
        ModelService model = fleet == null ? null : fleet.replicaModel(n);
        if (model == null) {
            throw new ApiException(404, "replica " + n + ": no such replica" + (fleet == null
                    ? " here (ask a fleet's first port, or the replica's own)" : ""), "replica");
        }
        return model;
    }

    private static void log(ModelService target, String route, RuntimeConfig[] change) {
        System.err.println("infersim: replica " + target.options.replica() + " " + route + ": " + change[1].changesSince(change[0]));
    }

    private static ObjectNode faultsJson(FaultSettings f) {
        ObjectNode o = Json.MAPPER.createObjectNode().put("failure_rate", f.failureRate());
        ArrayNode types = o.putArray("failure_types");
        f.types().forEach(t -> types.add(t.wireName()));
        return o.put("fault_after_tokens", f.afterTokens()).put("stall_ms", f.stallMs()).put("slow_first_token_ms", f.slowFirstTokenMs());
    }

    /** Rows of the truth log after {@code since} (default 0), JSON Lines; headers say where to go on and what was lost. */
    private void truth(RoutingContext rc) {
        String sinceParam = rc.request().getParam("since", "0");
        String limitParam = rc.request().getParam("limit", "1000");
        long since;
        int limit;
        try {
            since = Long.parseLong(sinceParam);
            limit = Integer.parseInt(limitParam);
        } catch (NumberFormatException e) {
            HttpBasics.error(rc, 400, "since and limit must be integers, got since=" + sinceParam + " limit=" + limitParam, null);
            return;
        }
        if (since < 0 || limit < 1 || limit > TRUTH_PAGE_ROWS) {
            HttpBasics.error(rc, 400, "since must be >= 0 and limit within 1.." + TRUTH_PAGE_ROWS, since < 0 ? "since" : "limit");
            return;
        }
        TruthLog.Page page = service.options.truthLog().since(since, limit);
        rc.response().putHeader("content-type", "application/x-ndjson")
                .putHeader("x-infersim-truth-next", Long.toString(page.next()))
                .putHeader("x-infersim-truth-missed", Long.toString(page.missed()))
                .putHeader("x-infersim-truth-dropped", Long.toString(page.dropped()))
                .end(page.body());
    }

    private static byte[] bodyBytes(RoutingContext rc) {
        return rc.body().buffer() == null ? new byte[0] : rc.body().buffer().getBytes();
    }

    /**
     * Each key of {@code body} must be one of {@code known}: a misspelt key would otherwise be a silent no-op, leaving a
     * test to run without the fault it asked for.
     */
    private static void rejectUnknown(ObjectNode body, List<String> known) {
        for (Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!known.contains(name)) {
                throw ApiException.badRequest(name, name + ": unknown field; known: " + String.join(", ", known));
            }
        }
    }
}
