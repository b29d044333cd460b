package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.SplitMix64;
import io.netty.handler.codec.TooLongFrameException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The HTTP surface, as vLLM's OpenAI-compatible server exposes it: {@code POST /v1/chat/completions},
 * {@code POST /v1/completions}, {@code GET /v1/models}, {@code GET /health}, {@code GET /version}, {@code GET /metrics},
 * {@code POST /tokenize}, {@code POST /detokenize}, {@code POST /reset_prefix_cache} (in development mode),
 * {@code POST /v1/load_lora_adapter} and {@code POST /v1/unload_lora_adapter} (with runtime LoRA updating on), plus
 * {@code GET|POST /admin/faults}. A request
 * whose {@code model} names a LoRA adapter runs on it. Every refusal is OpenAI error
 * JSON with the matching status; the header {@code x-infersim-fault: TYPE} forces a fault on one request.
 * One instance per event loop; all share the {@link ModelService}.
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
    /** The fields POST /admin/faults understands, as GET /admin/faults shows them. */
    private static final List<String> FAULT_KEYS = List.of("failure_rate", "failure_types", "fault_after_tokens", "stall_ms",
            "slow_first_token_ms");

    /** Whether the server is shutting down (new completions get 503). */
    interface Shutdown {
        boolean closing();
    }

    private final ModelService service;
    private final int port;
    private final Shutdown shutdown;
    private final FleetAdmin fleet;
    private final DashboardFeed dashboard;
    private final String replica;
    private volatile int boundPort;
    private HttpServer server;
    /** Each open connection's timeouts; this verticle's event loop only. */
    private final Map<HttpConnection, ConnectionGuard> guards = new HashMap<>();
    /** Threads that write responses too large for an event loop (shared by name among a Vert.x's servers). */
    private WorkerExecutor bodies;

    /** The routing context's key of the wire whose error format a translated request's errors take. */
    static final String WIRE_KEY = "infersim.wire";

    /** Most truth rows one GET returns (a page is built on the event loop). */
    static final int TRUTH_PAGE_ROWS = 10_000;

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
        this.replica = Integer.toString(service.options.replica());
    }

    int boundPort() {
        return boundPort;
    }

    @Override
    public Future<?> start() {
        bodies = vertx.createSharedWorkerExecutor(LARGE_BODY_WRITERS, LARGE_BODY_THREADS);
        Router router = Router.router(vertx);
        router.route().handler(this::assignRequestId);
        router.route("/v1/*").handler(this::authenticate);
        router.route("/v1/*").handler(this::refuseWhileLoading);
        router.route("/admin/*").handler(this::authenticate);
        BodyHandler body = BodyHandler.create(false).setBodyLimit(service.options.maxBodyBytes());
        if (service.options.features().pooling()) {
            router.post("/v1/embeddings").handler(body).handler(rc -> translated(rc, b -> Embeddings.translate(b, service)));
        } else {
            router.post("/v1/chat/completions").handler(body).handler(rc -> complete(rc, true));
            router.post("/v1/completions").handler(body).handler(rc -> complete(rc, false));
            router.post("/v1/messages").handler(body).handler(rc -> translated(rc, AnthropicMessages::translate));
            router.post("/v1/responses").handler(body).handler(rc -> translated(rc, b -> ResponsesApi.translate(b, service.options.features())));
        }
        if (service.options.features().sleepRoutes()) {
            SleepMode.mount(router, service);
        }
        router.get("/v1/models").handler(this::models);
        router.get("/health").handler(this::health);
        router.get("/health/ready").handler(this::ready);
        router.get("/version").handler(rc -> json(rc, Json.MAPPER.createObjectNode().put("version", version())));
        router.get("/metrics").handler(rc -> rc.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
                .end(ServerMetrics.render(service.shownMetrics(), service.options.metrics().legacy()) + loraMetrics()
                        + truthLogMetrics() + (service.kvConnector == null ? "" : service.kvConnector.renderMetrics())
                        + RuntimeMetrics.scrape()));
        if (service.options.runtimeLoraUpdating()) {
            router.post("/v1/load_lora_adapter").handler(body).handler(rc -> updateLoras(rc, true));
            router.post("/v1/unload_lora_adapter").handler(body).handler(rc -> updateLoras(rc, false));
        }
        if (dashboard != null) {
            Dashboard.mountLive(vertx, router, dashboard);
        }
        router.post("/tokenize").handler(body).handler(this::tokenize);
        router.post("/detokenize").handler(body).handler(this::detokenize);
        if (service.options.features().devMode()) {
            // vLLM mounts its development routes only under VLLM_SERVER_DEV_MODE=1 (vllm/entrypoints/serve/cache/api_router.py)
            router.post("/reset_prefix_cache").handler(this::refuseWhileLoading).handler(this::resetPrefixCache);
        }
        router.get("/admin/faults").handler(rc -> json(rc, faultsJson(service.faults.get())));
        router.post("/admin/faults").handler(body).handler(this::setFaults);
        if (service.options.truthLog() != null) {
            router.route("/infersim/*").handler(this::authenticate);
            router.get("/infersim/truth").handler(this::truth);
        }
        if (fleet != null) {
            router.get("/admin/replicas").handler(rc -> json(rc, fleet.describe()));
            router.post("/admin/replicas").handler(body).handler(this::setReplicas);
        }
        router.errorHandler(404, rc -> error(rc, 404, "Not Found: " + rc.request().method() + " " + rc.request().path(), null));
        router.errorHandler(405, rc -> error(rc, 405, "Method Not Allowed: " + rc.request().method() + " " + rc.request().path(), null));
        router.errorHandler(413, rc -> error(rc, 413, "Request body larger than " + service.options.maxBodyBytes() + " bytes", null));
        router.errorHandler(400, rc -> error(rc, 400, "Bad request", null));
        router.errorHandler(500, this::failed);
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

    private void assignRequestId(RoutingContext rc) {
        String id = rc.request().getHeader("x-request-id");
        if (id == null || id.isBlank()) {
            id = service.newRequestId(service.nextRequestSeq());
        }
        rc.put("requestId", id);
        rc.response().putHeader("x-request-id", id).putHeader(REPLICA_HEADER, replica);
        ConnectionGuard guard = guards.get(rc.request().connection());
        if (guard != null) {
            rc.response().endHandler(v -> guard.requestEnded());
        }
        PodIdentity pod = service.options.pod();
        if (pod.name() != null) {
            rc.response().putHeader(POD_HEADER, pod.name()).putHeader(PORT_HEADER, Integer.toString(boundPort));
        }
        if (pod.namespace() != null) {
            rc.response().putHeader(NAMESPACE_HEADER, pod.namespace());
        }
        rc.next();
    }

    /**
     * vLLM's {@code /health} ({@code vllm/entrypoints/serve/instrumentator/health.py}): 200 while the engine lives, so
     * also while in-flight requests drain after SIGTERM (the server stops listening once they have). With
     * {@code listenWhileLoading}, 503 while the model loads and once shutdown began, so a readiness probe keeps traffic
     * away exactly while requests would get 503.
     */
    private void health(RoutingContext rc) {
        if (shutdown.closing() && service.options.listenWhileLoading()) {
            error(rc, 503, "The server is shutting down", null);
        } else if (!service.loaded) {
            error(rc, 503, loadingMessage(), null);
        } else {
            rc.response().end();
        }
    }

    /** llm-d-inference-sim's {@code /health/ready}: 503 until the cold start is over, then 200. */
    private void ready(RoutingContext rc) {
        rc.response().putHeader("content-type", "application/json").setStatusCode(service.loaded ? 200 : 503).end();
    }

    private void authenticate(RoutingContext rc) {
        String key = service.options.apiKey();
        if (key != null && !bearerMatches(rc.request().getHeader("authorization"), key)) {
            error(rc, 401, "Unauthorized: missing or wrong API key (send Authorization: Bearer KEY)", null);
            return;
        }
        rc.next();
    }

    /**
     * vLLM's check ({@code AuthenticationMiddleware} in {@code vllm/entrypoints/openai/server_utils.py}): the scheme
     * {@code Bearer} in any case, then the key, compared by digest in constant time so that the answer's timing tells
     * nothing about how much of a guess was right.
     */
    static boolean bearerMatches(String authorization, String key) {
        if (authorization == null) {
            return false;
        }
        int space = authorization.indexOf(' ');
        if (space < 0 || !authorization.substring(0, space).equalsIgnoreCase("bearer")) {
            return false;
        }
        return MessageDigest.isEqual(sha256(authorization.substring(space + 1)), sha256(key));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** A loading vLLM pod serves nothing: every /v1 route answers 503 until the cold start ends. */
    private void refuseWhileLoading(RoutingContext rc) {
        if (service.loaded) {
            rc.next();
        } else {
            rc.response().putHeader("retry-after", "1");
            error(rc, 503, loadingMessage(), null);
        }
    }

    private String loadingMessage() {
        return "The model is loading (cold start of " + service.options.startupDelay() + " model time); retry later";
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
            error(rc, e.status, e.getMessage(), e.param);
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
                        error(rc, 409, "Prefix cache reset failed.", null);
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

    private void setReplicas(RoutingContext rc) {
        resize(rc, fleet, fleet::describe);
    }

    /**
     * {@code POST /admin/replicas {"replicas": N}}: resizes {@code fleet} and answers {@code describe}'s JSON once the
     * new replicas have started; a bad body is 400 with OpenAI error JSON. Shared with the front door.
     */
    static void resize(RoutingContext rc, FleetAdmin fleet, java.util.function.Supplier<ObjectNode> describe) {
        try {
            ObjectNode body = RequestParser.object(rc.body().buffer() == null ? new byte[0] : rc.body().buffer().getBytes());
            for (java.util.Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!name.equals("replicas")) {
                    throw ApiException.badRequest(name, name + ": unknown field; known: replicas");
                }
            }
            Integer n = JsonFields.of(body).optInt("replicas", 1, fleet.maxReplicas());
            if (n == null) {
                throw ApiException.badRequest("replicas", "replicas: field required (an integer from 1 to " + fleet.maxReplicas() + ")");
            }
            fleet.scaleTo(n).onComplete(ar -> {
                if (ar.succeeded()) {
                    json(rc, describe.get());
                } else if (ar.cause() instanceof MockFleet.PortUnavailable taken) {
                    // nothing changed: the replicas started for this request closed again
                    error(rc, 409, "Scaling to " + n + " replicas failed, the fleet is unchanged: " + taken.getMessage(), "replicas");
                } else {
                    error(rc, 500, "Scaling to " + n + " replicas failed: " + ar.cause().getMessage(), "replicas");
                }
            });
        } catch (ApiException e) {
            error(rc, e.status, e.getMessage(), e.param);
        }
    }

    private void complete(RoutingContext rc, boolean chat) {
        if (shutdown.closing()) {
            error(rc, 503, "The server is shutting down", null);
            return;
        }
        withParsed(rc, bytes -> service.parser.parse(RequestParser.object(bytes), chat), request -> admit(rc, chat, request, Wire.OPENAI));
    }

    /**
     * A request in another API's format (Anthropic Messages, OpenAI Responses): translated into a chat request as vLLM
     * translates it, then admitted like one, the answer translated back by {@code wire}. Errors past the translation
     * take the wire's error format.
     */
    private void translated(RoutingContext rc, Function<ObjectNode, Wire.Translation> translate) {
        if (shutdown.closing()) {
            error(rc, 503, "The server is shutting down", null);
            return;
        }
        withParsed(rc, bytes -> {
            Wire.Translation t = translate.apply(RequestParser.object(bytes));
            rc.put(WIRE_KEY, t.wire());
            return new Translated(service.parser.parse(t.request(), t.chat()), t);
        }, p -> admit(rc, p.translation().chat(), p.request(), p.translation().wire()));
    }

    private record Translated(CompletionRequest request, Wire.Translation translation) {
    }

    /** Admits a parsed request (faults, queue room) and starts its exchange, answering in {@code wire}'s format. */
    void admit(RoutingContext rc, boolean chat, CompletionRequest request, Wire wire) {
        long seq = service.nextRequestSeq();
        FaultType fault = chooseFault(rc, seq);
        if (fault != null && fault.isError()) {
            if (fault == FaultType.RATE_LIMIT) {
                rc.response().putHeader("retry-after", "1"); // as the real queue-full 429 below
            }
            throw faultError(fault, chat);
        }
        int sequences = request.prompts().size() * request.n();
        if (sequences > service.options.maxWaitingRequests()) {
            // Never admissible, even to an empty queue: a 429 would have a client honouring Retry-After retry forever.
            throw new ApiException(400, "The request needs " + sequences + " sequences (prompts x n) but the queue holds "
                    + "at most " + service.options.maxWaitingRequests() + " (--max-waiting-requests)", "n");
        }
        String route = rc.request().getHeader(FrontDoor.ROUTE_HEADER);
        String decision = route == null ? null : routeDecision(route);
        Exchange exchange = new Exchange(service, pinnedRank(rc), request, rc.response(), vertx.getOrCreateContext(), bodies,
                rc.get("requestId"), seq, fault, wire);
        if (decision != null) {
            exchange.routedBy(decision);
        }
        if (!exchange.submit()) {
            rc.response().putHeader("retry-after", "1");
            throw new ApiException(429, "Too many waiting requests: the queue holds at most "
                    + service.options.maxWaitingRequests() + " (--max-waiting-requests)", null);
        }
    }

    /**
     * Parses (and tokenizes) the body with {@code parse}, then passes the result to {@code next} on this event loop;
     * an {@link ApiException} from either is answered as error JSON. A body over {@value #OFF_LOOP_BYTES} bytes is
     * parsed on a worker thread: tokenizing a 15 MiB prompt takes a cold tokenizer seconds, and the other connections
     * of this event loop must not wait for it.
     */
    private <T> void withParsed(RoutingContext rc, Function<byte[], T> parse, Consumer<T> next) {
        Buffer body = rc.body().buffer();
        byte[] bytes = body == null ? new byte[0] : body.getBytes();
        if (bytes.length <= OFF_LOOP_BYTES) {
            answering(rc, () -> next.accept(parse.apply(bytes)));
            return;
        }
        vertx.executeBlocking(() -> parse.apply(bytes), false).onComplete(parsed -> {
            if (rc.response().closed()) {
                return; // the client left while its body was parsed
            }
            if (parsed.failed() && !(parsed.cause() instanceof ApiException)) {
                rc.fail(parsed.cause());
                return;
            }
            answering(rc, () -> {
                if (parsed.failed()) {
                    throw (ApiException) parsed.cause();
                }
                next.accept(parsed.result());
            });
        });
    }

    private static void answering(RoutingContext rc, Runnable handler) {
        try {
            handler.run();
        } catch (ApiException e) {
            error(rc, e.status, e.getMessage(), e.param);
        }
    }

    /** vLLM's {@code X-data-parallel-rank} header pins a request to one engine; -1 lets the load balancer pick. */
    private int pinnedRank(RoutingContext rc) {
        String pinned = rc.request().getHeader(DP_RANK_HEADER);
        if (pinned == null) {
            return -1;
        }
        int ranks = service.loops.size();
        try {
            int rank = Integer.parseInt(pinned.trim());
            if (rank >= 0 && rank < ranks) {
                return rank;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw ApiException.badRequest(DP_RANK_HEADER, DP_RANK_HEADER + ": expected a rank from 0 to " + (ranks - 1) + ", got '"
                + pinned + "'");
    }

    /** The front door's decision as the truth log keeps it: a JSON object, re-serialized so the log stays valid JSON. */
    private static String routeDecision(String header) {
        try {
            JsonNode decision = Json.MAPPER.readTree(header);
            if (decision != null && decision.isObject()) {
                return decision.toString();
            }
        } catch (java.io.IOException e) {
            // answered below
        }
        throw ApiException.badRequest(FrontDoor.ROUTE_HEADER, FrontDoor.ROUTE_HEADER + ": expected a JSON object, got " + header);
    }

    private FaultType chooseFault(RoutingContext rc, long seq) {
        String forced = rc.request().getHeader(FAULT_HEADER);
        if (forced != null) {
            FaultType t = FaultType.byName(forced);
            if (t == null) {
                throw ApiException.badRequest(FAULT_HEADER, FAULT_HEADER + ": unknown fault '" + forced + "'");
            }
            return t;
        }
        long salt = service.options.seed() ^ 0xFA17L;
        return service.faults.get().pick(SplitMix64.uniformAt(salt, seq), SplitMix64.uniformAt(salt, ~seq));
    }

    private ApiException faultError(FaultType fault, boolean chat) {
        return switch (fault) {
            case RATE_LIMIT -> new ApiException(429, "Rate limit reached (injected fault)", null);
            case SERVER_ERROR -> new ApiException(500, "Internal server error (injected fault)", null);
            case SERVICE_UNAVAILABLE -> new ApiException(503, "Service unavailable (injected fault)", null);
            case AUTH -> new ApiException(401, "Unauthorized (injected fault)", null);
            default -> {
                int len = service.capacity.maxModelLen();
                yield ApiException.badRequest(chat ? "messages" : "prompt", "This model's maximum context length is " + len
                        + " tokens. However, you requested " + (len + 1) + " tokens. Please reduce the length of the input (injected fault).");
            }
        };
    }

    private void models(RoutingContext rc) {
        ObjectNode list = Json.MAPPER.createObjectNode().put("object", "list");
        ArrayNode data = list.putArray("data");
        // vLLM lists one card per served name, each rooted at the one model they all name (its --model path).
        String hfId = service.options.deployment().model().hfId();
        String root = hfId == null ? service.options.deployment().model().name() : hfId;
        for (String name : service.options.servedModelNames()) {
            modelCard(data.addObject(), name, root, null).put("max_model_len", service.capacity.maxModelLen());
        }
        // then one card per LoRA adapter, rooted at its path, its parent the model it adapts
        if (service.loras != null) {
            for (LoraAdapters.Entry e : service.loras.list()) {
                modelCard(data.addObject(), e.adapter().name(), e.path(), e.parent()).putNull("max_model_len");
            }
        }
        json(rc, list);
    }

    private ObjectNode modelCard(ObjectNode m, String name, String root, String parent) {
        m.put("id", name).put("object", "model").put("created", System.currentTimeMillis() / 1000).put("owned_by", "vllm")
                .put("root", root).put("parent", parent);
        // vLLM's ModelCard always carries one permission entry with these values; clients that model the OpenAI schema
        // strictly (and gateways that relay the card) expect the list to be there.
        m.putArray("permission").addObject()
                .put("id", "modelperm-" + java.util.UUID.randomUUID().toString().replace("-", ""))
                .put("object", "model_permission").put("created", System.currentTimeMillis() / 1000)
                .put("allow_create_engine", false).put("allow_sampling", true).put("allow_logprobs", true)
                .put("allow_search_indices", false).put("allow_view", true).put("allow_fine_tuning", false)
                .put("organization", "*").putNull("group").put("is_blocking", false);
        return m;
    }

    private String truthLogMetrics() {
        return service.options.truthLog() == null ? "" : service.options.truthLog().metrics();
    }

    private String loraMetrics() {
        FakeMetrics fake = service.options.metrics().fake();
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
            ObjectNode body = RequestParser.object(rc.body().buffer() == null ? new byte[0] : rc.body().buffer().getBytes());
            if (service.loras == null) {
                throw ApiException.badRequest(null, "LoRA is not enabled. Use --enable-lora to enable LoRA.");
            }
            String name = JsonFields.of(body).optString("lora_name");
            String message;
            if (load) {
                service.registerLora(service.loras.load(name, JsonFields.of(body).optString("lora_path")).adapter().id());
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
                    .end(errorJson(e.status, e.getMessage(), null, e.type));
        } catch (ApiException e) {
            error(rc, e.status, e.getMessage(), e.param);
        }
    }

    /** Parsed, tokenized and serialized where {@link #withParsed} puts a body of its size: the answer grows with it. */
    private void tokenize(RoutingContext rc) {
        withParsed(rc, bytes -> tokenized(bytes).toString(), out -> jsonText(rc, out));
    }

    private ObjectNode tokenized(byte[] bytes) {
        ObjectNode body = RequestParser.object(bytes);
        service.parser.checkModel(body);
        int[] ids;
        if (body.hasNonNull("messages")) {
            ids = service.parser.chatPrompt(body);
        } else {
            String prompt = JsonFields.of(body).optString("prompt");
            if (prompt == null) {
                throw ApiException.badRequest("prompt", "prompt: field required (or messages)");
            }
            ids = service.tokenizer.encodePrompt(prompt);
        }
        ObjectNode out = Json.MAPPER.createObjectNode().put("count", ids.length).put("max_model_len", service.capacity.maxModelLen());
        ArrayNode tokens = out.putArray("tokens");
        for (int id : ids) {
            tokens.add(id);
        }
        if (JsonFields.of(body).optBool("return_token_strs", false)) {
            ArrayNode strs = out.putArray("token_strs");
            for (int id : ids) {
                strs.add(service.tokenizer.piece(id));
            }
        } else {
            out.putNull("token_strs");
        }
        return out;
    }

    private void detokenize(RoutingContext rc) {
        withParsed(rc, this::detokenized, out -> jsonText(rc, out));
    }

    private String detokenized(byte[] bytes) {
        ObjectNode body = RequestParser.object(bytes);
        service.parser.checkModel(body);
        JsonNode tokens = body.get("tokens");
        if (tokens == null || !tokens.isArray()) {
            throw ApiException.badRequest("tokens", "tokens: expected a list of token ids");
        }
        int[] ids = new int[tokens.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = tokens.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt()) {
                throw ApiException.badRequest("tokens", "tokens: expected integers, got " + JsonFields.describe(t));
            }
            ids[i] = t.asInt();
        }
        String text;
        try {
            text = service.tokenizer.decode(ids);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("tokens", "tokens: " + e.getMessage());
        }
        return Json.MAPPER.createObjectNode().put("prompt", text).toString();
    }

    private void setFaults(RoutingContext rc) {
        try {
            ObjectNode body = RequestParser.object(rc.body().buffer() == null ? new byte[0] : rc.body().buffer().getBytes());
            // A misspelt key would otherwise be a silent no-op, leaving a test to run without the fault it asked for.
            for (java.util.Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!FAULT_KEYS.contains(name)) {
                    throw ApiException.badRequest(name, name + ": unknown field; known: " + String.join(", ", FAULT_KEYS));
                }
            }
            FaultSettings now = service.faults.get();
            Double rate = JsonFields.of(body).optNumber("failure_rate", 0, 1);
            List<FaultType> types = now.types();
            JsonNode t = body.get("failure_types");
            if (t != null && !t.isNull()) {
                if (!t.isArray()) {
                    throw ApiException.badRequest("failure_types", "failure_types: expected a list of fault names");
                }
                List<FaultType> parsed = new ArrayList<>();
                for (JsonNode e : t) {
                    FaultType f = e.isTextual() ? FaultType.byName(e.asText()) : null;
                    if (f == null) {
                        throw ApiException.badRequest("failure_types", "failure_types: unknown fault " + e);
                    }
                    parsed.add(f);
                }
                types = parsed;
            }
            Integer after = JsonFields.of(body).optInt("fault_after_tokens", 0, Integer.MAX_VALUE);
            Integer stall = JsonFields.of(body).optInt("stall_ms", 0, Integer.MAX_VALUE);
            Integer slow = JsonFields.of(body).optInt("slow_first_token_ms", 0, Integer.MAX_VALUE);
            FaultSettings next;
            try {
                next = new FaultSettings(rate == null ? now.failureRate() : rate, types, after == null ? now.afterTokens() : after,
                        stall == null ? now.stallMs() : stall, slow == null ? now.slowFirstTokenMs() : slow);
            } catch (IllegalArgumentException e) {
                throw ApiException.badRequest("failure_rate", e.getMessage());
            }
            service.faults.set(next);
            json(rc, faultsJson(next));
        } catch (ApiException e) {
            error(rc, e.status, e.getMessage(), e.param);
        }
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
            error(rc, 400, "since and limit must be integers, got since=" + sinceParam + " limit=" + limitParam, null);
            return;
        }
        if (since < 0 || limit < 1 || limit > TRUTH_PAGE_ROWS) {
            error(rc, 400, "since must be >= 0 and limit within 1.." + TRUTH_PAGE_ROWS, since < 0 ? "since" : "limit");
            return;
        }
        TruthLog.Page page = service.options.truthLog().since(since, limit);
        rc.response().putHeader("content-type", "application/x-ndjson")
                .putHeader("x-infersim-truth-next", Long.toString(page.next()))
                .putHeader("x-infersim-truth-missed", Long.toString(page.missed()))
                .putHeader("x-infersim-truth-dropped", Long.toString(page.dropped()))
                .end(page.body());
    }

    private void failed(RoutingContext rc) {
        Throwable f = rc.failure();
        if (f instanceof ApiException e) {
            error(rc, e.status, e.getMessage(), e.param);
        } else {
            // the cause goes to the log, not to the client: a stack's class names and messages are the server's business
            System.err.println("infersim: internal error answering " + rc.request().method() + " " + rc.request().path() + ": " + f);
            error(rc, 500, "Internal server error", null);
        }
    }

    private static void json(RoutingContext rc, ObjectNode body) {
        jsonText(rc, body.toString());
    }

    private static void jsonText(RoutingContext rc, String body) {
        rc.response().putHeader("content-type", "application/json").end(body);
    }

    /** Writes {@code {"error":{"message","type","param","code"}}}; if a stream already started, just closes it. */
    static void error(RoutingContext rc, int status, String message, String param) {
        HttpServerResponse response = rc.response();
        if (response.headWritten()) {
            if (!response.ended()) {
                response.reset();
            }
            return;
        }
        String json = rc.get(WIRE_KEY) instanceof Wire w ? w.error(status, message, param, ApiException.typeOf(status))
                : errorJson(status, message, param);
        response.setStatusCode(status).putHeader("content-type", "application/json").end(json);
    }

    private static String errorJson(int status, String message, String param) {
        return errorJson(status, message, param, ApiException.typeOf(status));
    }

    private static String errorJson(int status, String message, String param, String type) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        ObjectNode error = body.putObject("error").put("message", message).put("type", type);
        if (param == null) {
            error.putNull("param");
        } else {
            error.put("param", param);
        }
        error.put("code", status);
        return body.toString();
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
                .end(errorJson(status, "Invalid HTTP request: " + why, null))
                .onComplete(done -> request.connection().close());
    }

    private static String version() {
        String v = HttpApi.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }
}
