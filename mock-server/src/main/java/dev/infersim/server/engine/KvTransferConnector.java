package dev.infersim.server.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.ConfigException;
import dev.infersim.common.SplitMix64;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.KvTransferListener;
import dev.infersim.server.config.KvTransferConfig;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.json.Json;
import dev.infersim.server.observe.KvTransferMetrics;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A server's NixlConnector stand-in ({@link KvTransferConfig}): it names each engine ({@code engine_id}), describes the
 * blocks a finished prefill holds ({@link Choice.HeldKv}, its response's {@code kv_transfer_params}), and carries the
 * two messages vLLM's NIXL agents exchange between a decode and a prefill engine, over a side channel of plain HTTP
 * (vLLM's is a ZMQ handshake plus NIXL notifications, which the mock does not speak) on each engine's
 * {@code remote_host}:{@code remote_port}:
 * <ul>
 *   <li>{@code POST /nixl/notify {"remote_engine_id", "remote_request_id"}}: the decode side has read the blocks (vLLM's
 *       notification after its read completes); the prefill engine frees them.</li>
 *   <li>{@code POST /nixl/heartbeat {"remote_engine_id", "remote_request_ids": [...]}}: the decode side still waits to
 *       read them (vLLM's {@code HB:} notification, every {@code kv_lease_duration // 6} s for requests it has not pulled
 *       yet); each lease is extended.</li>
 * </ul>
 * The pull itself is the engine model's ({@link dev.infersim.engine.KvTransferLink}): no bytes cross the side channel,
 * and a pull always succeeds. A notification that cannot be delivered is counted
 * ({@code vllm:nixl_num_failed_notifications_total}); the prefill side then frees the blocks when the lease ends.
 */
public final class KvTransferConnector {
    /** A decode side's message about the hold {@code requestId}: read (free it), or a heartbeat (extend its lease). */
    record Notice(String requestId, boolean heartbeat) {
    }

    private final KvTransferConfig config;
    private final ServerOptions options;
    private final String[] engineIds;
    private final int[] ports;
    private final List<KvTransferMetrics> metrics = new ArrayList<>();
    /** Decode choices that have not pulled yet: their prefills get heartbeats. */
    private final Set<Choice> waiting = ConcurrentHashMap.newKeySet();
    private final double bytesPerToken;
    private final List<HttpServer> servers = new ArrayList<>();
    private Vertx vertx;
    /** Where side-channel messages are sent from (set by {@link #start}): never the engine thread. */
    private volatile Context context;
    private HttpClient client;
    private long heartbeatTimer = -1;

    public KvTransferConnector(ServerOptions options, int engines, double kvBytesPerTokenPerGpu) {
        this.options = options;
        this.config = options.kvTransfer();
        this.engineIds = new String[engines];
        this.ports = new int[engines];
        String base = config.engineId() != null ? config.engineId() : uuid(options.seed(), options.replica());
        for (int rank = 0; rank < engines; rank++) {
            engineIds[rank] = engines > 1 ? base + "_dp" + rank : base; // as vLLM's EngineCoreProc names data-parallel ranks
            metrics.add(new KvTransferMetrics(options.servedModelName(), rank));
        }
        this.bytesPerToken = kvBytesPerTokenPerGpu * options.deployment().tensorParallelSize();
    }

    /** A version-4-shaped UUID drawn from the seed and the replica (vLLM draws {@code uuid.uuid4()}). */
    private static String uuid(long seed, int replica) {
        long hi = SplitMix64.valueAt(seed ^ 0x4E49584CL, replica);
        long lo = SplitMix64.valueAt(~seed ^ 0x4E49584CL, replica);
        return new UUID((hi & ~0xF000L) | 0x4000L, (lo & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L).toString();
    }

    public KvTransferConfig config() {
        return config;
    }

    KvTransferMetrics metrics(int rank) {
        return metrics.get(rank);
    }

    public String engineId(int rank) {
        return engineIds[rank];
    }

    /** The side-channel port engine {@code rank} listens on (bound once started). */
    public int port(int rank) {
        return ports[rank];
    }

    /** Engine thread: what a finished prefill holds, for its response. */
    Choice.HeldKv held(EngineRequest r, int rank, String requestId) {
        return new Choice.HeldKv(r.blockIds(), engineIds[rank], requestId, config.sideChannelHost(), ports[rank],
                options.deployment().tensorParallelSize(), r.computedTokens());
    }

    /**
     * Tells the decode engine {@code rank}'s pulls to the prefill sides they came from. It runs inside the engine's step
     * on the engine thread: nothing it does may throw there, and the notification itself goes out from an event loop.
     */
    public KvTransferListener listener(int rank) {
        return (r, now) -> {
            try {
                if (r.kvTransferEndNanos() >= 0) {
                    metrics.get(rank).pulled(r, r.kvTransferTokens() * bytesPerToken);
                }
                pullDone((Choice) r.attachment(), rank);
            } catch (RuntimeException e) {
                metrics.get(rank).failedNotification();
            }
        };
    }

    /**
     * Any thread: a decode choice no longer needs its prefill's blocks: it pulled them, or it was aborted or refused
     * before it did (vLLM then notifies the prefill side too, {@code notify_kv_transfer_request_rejected}).
     */
    public void pullDone(Choice c, int rank) {
        waiting.remove(c);
        KvTransferParams p = c.remotePrefill;
        ObjectNode body = Json.MAPPER.createObjectNode().put("remote_engine_id", p.remoteEngineId())
                .put("remote_request_id", p.remoteRequestId());
        if (context == null) {
            metrics.get(rank).failedNotification(); // not started: nowhere to send from
        } else {
            context.runOnContext(v -> post(p.remoteHost(), p.remotePort(), "/nixl/notify", body, rank));
        }
    }

    /** A decode choice arrived: its prefill's lease is renewed until it pulls. */
    public void awaitingPull(Choice c) {
        waiting.add(c);
    }

    /** Event loop: one side-channel message; one that cannot be sent, or is not answered 200, is counted as failed. */
    private void post(String host, int port, String path, ObjectNode body, int rank) {
        try {
            client.request(HttpMethod.POST, port, host, path)
                    .compose(req -> req.putHeader("content-type", "application/json").send(Buffer.buffer(body.toString())))
                    .onComplete(ar -> {
                        if (ar.failed() || ar.result().statusCode() != 200) {
                            metrics.get(rank).failedNotification();
                        }
                    });
        } catch (RuntimeException e) {
            metrics.get(rank).failedNotification();
        }
    }

    /** Binds every engine's side channel and starts the heartbeats; {@code loops} are the engines, by rank. */
    public Future<Void> start(Vertx vertx, List<EngineLoop> loops) {
        this.vertx = vertx;
        this.client = vertx.createHttpClient();
        this.context = vertx.getOrCreateContext();
        List<Future<HttpServer>> bound = new ArrayList<>();
        for (int rank = 0; rank < loops.size(); rank++) {
            EngineLoop loop = loops.get(rank);
            int r = rank;
            int port = config.sideChannelPort() == 0 ? 0 : config.sideChannelPort() + options.replica() * loops.size() + rank;
            HttpServer server = vertx.createHttpServer();
            servers.add(server);
            bound.add(server.requestHandler(req -> sideChannel(req, r, loop)).listen(port, config.sideChannelHost())
                    .onSuccess(s -> ports[r] = s.actualPort())
                    // a ConfigException without the I/O cause: the flag to blame is the side channel's, not --port
                    .recover(e -> Future.failedFuture(new ConfigException("VLLM_NIXL_SIDE_CHANNEL_HOST:PORT "
                            + config.sideChannelHost() + ":" + port + ": the KV transfer side channel cannot listen ("
                            + String.valueOf(e.getMessage()).trim() + ")"))));
        }
        long periodMs = Math.max(1, Math.round(config.heartbeatIntervalNanos() / options.timeScale() / 1e6));
        heartbeatTimer = vertx.setPeriodic(periodMs, t -> heartbeats());
        return Future.all(bound).mapEmpty();
    }

    public Future<Void> close() {
        if (vertx == null) {
            return Future.succeededFuture();
        }
        vertx.cancelTimer(heartbeatTimer);
        List<Future<Void>> closed = new ArrayList<>();
        for (HttpServer s : servers) {
            closed.add(s.close());
        }
        closed.add(client.close());
        return Future.join(closed).mapEmpty();
    }

    /** One heartbeat per prefill engine, naming the holds decode choices here still wait to read. */
    private void heartbeats() {
        Map<String, ArrayNode> byEngine = new HashMap<>();
        Map<String, KvTransferParams> where = new HashMap<>();
        for (Choice c : waiting) {
            KvTransferParams p = c.remotePrefill;
            String key = p.remoteHost() + ':' + p.remotePort() + '/' + p.remoteEngineId();
            byEngine.computeIfAbsent(key, k -> Json.MAPPER.createArrayNode()).add(p.remoteRequestId());
            where.putIfAbsent(key, p);
        }
        for (Map.Entry<String, ArrayNode> e : byEngine.entrySet()) {
            KvTransferParams p = where.get(e.getKey());
            ObjectNode body = Json.MAPPER.createObjectNode().put("remote_engine_id", p.remoteEngineId());
            body.set("remote_request_ids", e.getValue());
            post(p.remoteHost(), p.remotePort(), "/nixl/heartbeat", body, 0);
        }
    }

    /** The side channel of engine {@code rank}: a decode side's notification or heartbeat. */
    private void sideChannel(HttpServerRequest req, int rank, EngineLoop loop) {
        boolean notify = req.path().equals("/nixl/notify");
        if (req.method() != HttpMethod.POST || !notify && !req.path().equals("/nixl/heartbeat")) {
            req.response().setStatusCode(404).end("{\"error\": \"POST /nixl/notify or /nixl/heartbeat\"}");
            return;
        }
        req.body().onSuccess(buffer -> {
            JsonNode body;
            try {
                body = Json.MAPPER.readTree(buffer.getBytes());
            } catch (java.io.IOException e) {
                body = null;
            }
            if (body == null || !body.isObject() || !engineIds[rank].equals(body.path("remote_engine_id").asText(null))) {
                req.response().setStatusCode(404).end("{\"error\": \"not this engine's side channel\"}");
                return;
            }
            if (notify) {
                loop.kvNotice(new Notice(body.path("remote_request_id").asText(), false));
            } else {
                for (JsonNode id : body.path("remote_request_ids")) {
                    loop.kvNotice(new Notice(id.asText(), true));
                }
            }
            req.response().putHeader("content-type", "application/json").end("{}");
        });
    }

    public String renderMetrics() {
        return KvTransferMetrics.render(metrics);
    }
}
