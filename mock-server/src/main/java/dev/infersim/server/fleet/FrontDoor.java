package dev.infersim.server.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.http.HardenedHttpServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.routes.AdminRoutes;
import dev.infersim.server.routes.HttpBasics;
import dev.infersim.server.text.PromptTokenizer;
import dev.infersim.sim.RoutedRequest;
import dev.infersim.sim.Router;
import dev.infersim.sim.Routers;
import dev.infersim.sim.RoutingTarget;
import dev.infersim.sim.TieBreak;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * {@code infersim serve --replicas N --router NAME}: a reference gateway on {@code --port} in front of a {@link MockFleet}
 * (replica i on {@code --port + 1 + i}) that routes each completion with the very {@link Router} {@code simulate
 * --router} runs, so a team can diff its own gateway's routing against it on the same fleet and {@code autoscale} needs
 * no external gateway. The router sees each ready replica as nginx's {@code least_conn} does: the requests this door has
 * outstanding there (sent, response not yet ended) and the adapters they run on, plus the replica's KV-cache usage as
 * its {@code /metrics} reports it; it sees each request's prompt tokenized with the replicas' tokenizer and the LoRA
 * adapter its {@code model} names. The request goes on unchanged through Vert.x's HTTP client and its response comes
 * back as it arrives, chunk by chunk, untouched; the decision travels in the {@code x-infersim-route} header, which a
 * replica writes into its truth log as {@code route}. {@code /admin/replicas} resizes the fleet; {@code /health} is 200
 * while a replica is ready; other routes go to the first ready replica. One event loop routes, so the router sees one
 * request at a time. Its HTTP server is a replica's ({@link HardenedHttpServer}): the same timeouts
 * ({@code --header-timeout-s} and the rest), framing rules and share of the process's descriptors.
 */
public final class FrontDoor {
    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "transfer-encoding", "te", "trailer",
            "upgrade", "proxy-authorization", "proxy-authenticate", "host", "content-length");

    private final MockFleet fleet;
    private final Vertx vertx;
    private final ServerOptions base;
    private final Router router;
    private final String routerName;
    private final PromptTokenizer tokenizer;
    private final HttpClient client;
    private final Map<MockServer, LiveTarget> targets = new IdentityHashMap<>();
    private HttpServer server;

    private FrontDoor(MockFleet fleet, ServerOptions base, String routerName, TieBreak tieBreak) {
        this.fleet = fleet;
        this.vertx = fleet.vertx();
        this.base = base;
        this.routerName = routerName;
        this.router = Routers.byName(routerName, base.seed(), tieBreak);
        this.tokenizer = base.tokenizer() != null ? base.tokenizer() : new PromptTokenizer();
        this.client = vertx.createHttpClient(new HttpClientOptions().setTcpNoDelay(true).setKeepAlive(true),
                new PoolOptions().setHttp1MaxSize(4096));
    }

    /**
     * Starts {@code replicas} replicas of {@code base} on the ports after {@code base.port()} (any free ones for port 0)
     * and the front door on {@code base.port()}, routing with {@code routerName}.
     */
    public static Future<FrontDoor> start(ServerOptions base, int replicas, Duration drainGrace, Consumer<MockServer> onLoaded,
                                          String routerName, TieBreak tieBreak) {
        Routers.byName(routerName, 0); // an unknown name fails before anything starts
        ServerOptions behind = base.forReplica(0, base.port() == 0 ? 0 : base.port() + 1);
        return MockFleet.start(behind, replicas, drainGrace, onLoaded).compose(fleet -> {
            FrontDoor door = new FrontDoor(fleet, base, routerName, tieBreak);
            return door.listen().map(door).recover(e -> fleet.close(Duration.ZERO).transform(x -> Future.failedFuture(e)));
        });
    }

    private Future<Void> listen() {
        io.vertx.ext.web.Router web = io.vertx.ext.web.Router.router(vertx);
        BodyHandler body = BodyHandler.create(false).setBodyLimit(base.maxBodyBytes());
        web.route("/admin/*").handler(this::authenticate);
        web.get("/admin/replicas").handler(rc -> json(rc.response(), describe()));
        web.post("/admin/replicas").handler(body).handler(rc -> AdminRoutes.resize(rc, fleet, this::describe));
        web.get("/health").handler(rc -> rc.response().setStatusCode(ready().isEmpty() ? 503 : 200).end());
        web.post("/v1/completions").handler(body).handler(this::route);
        web.post("/v1/chat/completions").handler(body).handler(this::route);
        web.route().handler(body).handler(this::forward);
        // the replicas' own hardening: timeouts, the descriptor budget, strict framing, refusals that close
        server = HardenedHttpServer.create(vertx, base.timeouts(), web);
        return server.listen(base.port(), base.host()).mapEmpty();
    }

    /** The port the front door listens on. */
    public int port() {
        return server.actualPort();
    }

    /** {@code http://host:port} of the front door. */
    public String baseUrl() {
        String host = base.host();
        boolean ipv6Literal = host.indexOf(':') >= 0 && !host.startsWith("[");
        return "http://" + (ipv6Literal ? "[" + host + "]" : host) + ":" + port();
    }

    /** The fleet behind it. */
    public MockFleet fleet() {
        return fleet;
    }

    /** The router's name. */
    public String routerName() {
        return routerName;
    }

    /**
     * Closes the front door, then drains the fleet for up to {@code grace}. The fleet closes its Vert.x instance, which
     * must not be asked from one of its own event loops, so that last step runs on a thread of the common pool.
     */
    public Future<Void> close(Duration grace) {
        io.vertx.core.Promise<Void> closed = io.vertx.core.Promise.promise();
        server.close().transform(x -> client.close()).onComplete(x -> java.util.concurrent.ForkJoinPool.commonPool()
                .execute(() -> fleet.close(grace).onComplete(closed)));
        return closed.future();
    }

    private ObjectNode describe() {
        return fleet.describe().put("router", routerName).put("front_door", baseUrl());
    }

    private void authenticate(RoutingContext rc) {
        String key = base.apiKey();
        if (key != null && !("Bearer " + key).equals(rc.request().getHeader("authorization"))) {
            HttpBasics.error(rc, 401, "Unauthorized: missing or wrong API key (send Authorization: Bearer KEY)", null);
            return;
        }
        rc.next();
    }

    /** The replicas taking requests now, by index: loaded, listening and not draining. */
    private List<MockServer> ready() {
        List<MockServer> ready = new ArrayList<>();
        for (MockServer s : fleet.replicas()) {
            if (s.state() == MockServer.State.READY && s.port() > 0) {
                ready.add(s);
            }
        }
        return ready;
    }

    /** Routes a completion with the router and proxies it to the replica chosen. */
    private void route(RoutingContext rc) {
        List<MockServer> ready = ready();
        if (ready.isEmpty()) {
            HttpBasics.error(rc, 503, "No replica is ready (all are loading or draining)", null);
            return;
        }
        targets.keySet().retainAll(fleet.replicas());
        LiveTarget[] view = new LiveTarget[ready.size()];
        for (int i = 0; i < view.length; i++) {
            view[i] = targets.computeIfAbsent(ready.get(i), LiveTarget::new);
        }
        Buffer body = rc.body().buffer() == null ? Buffer.buffer() : rc.body().buffer();
        LiveRequest request = LiveRequest.parse(body.getBytes(), rc.request().path().endsWith("/chat/completions"),
                base.servedModelNames(), tokenizer);
        int chosen = router.route(request, view);
        LiveTarget target = view[chosen];
        ObjectNode decision = Json.MAPPER.createObjectNode().put("router", routerName).put("replica", target.id());
        var loads = decision.putArray("loads");
        for (LiveTarget t : view) {
            loads.add(t.load());
        }
        target.started(request.lora());
        proxy(rc, target.server, body, decision.toString(), () -> target.ended(request.lora()));
    }

    /** Any other request goes to the first ready replica, unrouted and uncounted. */
    private void forward(RoutingContext rc) {
        List<MockServer> ready = ready();
        if (ready.isEmpty()) {
            HttpBasics.error(rc, 503, "No replica is ready (all are loading or draining)", null);
            return;
        }
        proxy(rc, ready.get(0), rc.body().buffer() == null ? Buffer.buffer() : rc.body().buffer(), null, () -> { });
    }

    /**
     * Sends the request on to {@code replica} as it came (method, path, headers but the hop-by-hop ones, body) and
     * streams the answer back as it arrives; {@code done} runs once, when the answer has ended or failed or the client
     * went away (whose request is then reset, so the replica aborts it).
     */
    private void proxy(RoutingContext rc, MockServer replica, Buffer body, String route, Runnable done) {
        HttpServerResponse out = rc.response();
        Runnable once = new Runnable() {
            private boolean ran;

            @Override
            public void run() {
                if (!ran) {
                    ran = true;
                    done.run();
                }
            }
        };
        RequestOptions to = new RequestOptions().setHost(replica.options().host()).setPort(replica.port())
                .setMethod(rc.request().method()).setURI(rc.request().uri());
        client.request(to).compose(upstream -> {
            copyHeaders(rc.request().headers(), upstream.headers());
            if (route != null) {
                upstream.putHeader(HttpBasics.ROUTE_HEADER, route);
            }
            out.closeHandler(v -> {
                upstream.reset();
                once.run();
            });
            return upstream.send(body);
        }).onSuccess(answer -> relay(answer, out, once)).onFailure(e -> {
            once.run();
            HttpBasics.error(rc, 502, "Replica " + replica.replica() + " failed: " + e.getMessage(), null);
        });
    }

    private static void relay(HttpClientResponse answer, HttpServerResponse out, Runnable done) {
        out.setStatusCode(answer.statusCode()).setStatusMessage(answer.statusMessage());
        copyHeaders(answer.headers(), out.headers());
        String length = answer.getHeader("content-length");
        if (length != null) {
            out.putHeader("content-length", length);
        } else {
            out.setChunked(true);
        }
        answer.pipeTo(out).onComplete(ar -> done.run());
    }

    private static void copyHeaders(MultiMap from, MultiMap to) {
        for (Map.Entry<String, String> h : from) {
            if (!HOP_BY_HOP.contains(h.getKey().toLowerCase(Locale.ROOT))) {
                to.add(h.getKey(), h.getValue());
            }
        }
    }

    private static void json(HttpServerResponse response, ObjectNode body) {
        response.putHeader("content-type", "application/json").end(body.toString());
    }

    /** A replica as the router sees it from the front door. Used on the front door's event loop only. */
    private final class LiveTarget implements RoutingTarget {
        final MockServer server;
        private int outstanding;
        private final Map<String, int[]> adapters = new HashMap<>();
        private int activeAdapters;

        LiveTarget(MockServer server) {
            this.server = server;
        }

        void started(String lora) {
            outstanding++;
            if (lora != null && adapters.computeIfAbsent(lora, k -> new int[1])[0]++ == 0) {
                activeAdapters++;
            }
        }

        void ended(String lora) {
            outstanding--;
            if (lora != null && --adapters.get(lora)[0] == 0) {
                activeAdapters--;
            }
        }

        @Override
        public int id() {
            return server.replica();
        }

        @Override
        public int load() {
            return outstanding;
        }

        @Override
        public double kvCacheUsage() {
            return server.kvCacheUsage();
        }

        @Override
        public int requestsOnAdapter(String name) {
            int[] n = adapters.get(name);
            return n == null ? 0 : n[0];
        }

        @Override
        public int activeAdapters() {
            return activeAdapters;
        }

        @Override
        public int maxLoras() {
            return base.deployment().lora() == null ? 0 : base.deployment().lora().maxLoras();
        }

        @Override
        public int blockSize() {
            return base.deployment().blockSize();
        }

        @Override
        public int vocabSize() {
            return base.deployment().model().vocabSize();
        }
    }

    /**
     * A completion as the router reads it: its prompt's token ids (the replicas' tokenizer, a token-id prompt as it
     * came; the first prompt of a list) and the adapter its {@code model} names when that is not a served base name. A
     * body the replica will refuse is routed as a one-token prompt on the base model.
     */
    record LiveRequest(int[] ids, String lora) implements RoutedRequest {
        static LiveRequest parse(byte[] body, boolean chat, List<String> servedNames, PromptTokenizer tokenizer) {
            try {
                JsonNode o = Json.MAPPER.readTree(body);
                String model = o.path("model").isTextual() ? o.path("model").asText() : null;
                String lora = model == null || servedNames.contains(model) ? null : model;
                return new LiveRequest(chat ? chatIds(o.path("messages"), tokenizer) : promptIds(o.path("prompt"), tokenizer), lora);
            } catch (java.io.IOException | RuntimeException e) {
                return new LiveRequest(new int[0], null);
            }
        }

        private static int[] promptIds(JsonNode prompt, PromptTokenizer tokenizer) {
            JsonNode first = prompt.isArray() && prompt.size() > 0 && !prompt.get(0).isNumber() ? prompt.get(0) : prompt;
            if (first.isTextual()) {
                return tokenizer.encodePrompt(first.asText());
            }
            int[] ids = new int[first.size()];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = first.get(i).asInt();
            }
            return ids;
        }

        private static int[] chatIds(JsonNode messages, PromptTokenizer tokenizer) {
            List<PromptTokenizer.Message> list = new ArrayList<>();
            for (JsonNode m : messages) {
                JsonNode content = m.path("content");
                StringBuilder text = new StringBuilder();
                if (content.isArray()) {
                    content.forEach(part -> text.append(part.path("text").asText("")));
                } else {
                    text.append(content.asText(""));
                }
                list.add(new PromptTokenizer.Message(m.path("role").asText("user"), text.toString()));
            }
            return tokenizer.applyChatTemplate(list);
        }

        @Override
        public int promptTokens() {
            return Math.max(1, ids.length);
        }

        @Override
        public int fillLeadingTokenIds(int[] dst, int count, int vocabSize) {
            int n = Math.min(count, ids.length);
            System.arraycopy(ids, 0, dst, 0, n);
            return n;
        }
    }
}
