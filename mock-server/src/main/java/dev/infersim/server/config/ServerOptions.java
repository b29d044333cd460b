package dev.infersim.server.config;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.SchedulingPolicies;
import dev.infersim.workload.length.LengthDistribution;
import dev.infersim.engine.StartupDelay;
import dev.infersim.server.engine.RealtimePriority;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.observe.Dashboard;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.server.text.DatasetReplies;
import dev.infersim.server.text.PromptTokenizer;

import java.util.List;
import java.util.Objects;

/**
 * Everything {@link MockServer} needs: the modelled deployment plus the HTTP-side settings of {@code infersim serve}.
 *
 * @param deployment          the engine model (GPU, model, vLLM serving flags)
 * @param schedulingPolicy    {@code fcfs} or {@code priority}
 * @param servedModelNames    the model ids clients may send, each listed by {@code /v1/models} (vLLM's
 *                            {@code --served-model-name a b}); responses and metrics name the first, as vLLM's do
 * @param host                interface to bind
 * @param port                TCP port; 0 picks a free one ({@link MockServer#port()} tells which)
 * @param apiKey              bearer token required on /v1 and admin routes; null for none (never empty)
 * @param timeScale           k: the server runs k times faster than the modelled GPU (model time = wall time x k)
 * @param maxWaitingRequests  requests accepted but not yet scheduled beyond which new ones get 429 (at least 1)
 * @param outputMode          lorem or echo
 * @param seed                server seed: text and output lengths of requests without their own seed derive from it
 * @param eosPosition         where the mock model emits EOS in requests without ignore_eos (the workload's length
 *                            family), or null for never before max_tokens, as the simulator's default
 * @param faults              initial fault injection settings (changeable at run time via POST /admin/faults)
 * @param maxBodyBytes        request bodies above this get 413
 * @param eventLoops          Vert.x event loops serving HTTP; 0 means one per core
 * @param realtimeEngine      run the engine thread under Linux's SCHED_FIFO ({@link RealtimePriority}); start fails
 *                            when that is not permitted
 * @param realtimeEventLoops  run the event loops that serve HTTP under SCHED_FIFO, below a real-time engine, so that
 *                            they read a request as soon as it arrives ({@link RealtimePriority}); start fails when
 *                            that is not permitted
 * @param replica             this server's index in its fleet (0 alone): the {@code x-infersim-replica} header and the
 *                            ground truth's {@code replica} name it
 * @param startupDelay        the cold start (model time): no listener meanwhile (or 503 with listenWhileLoading)
 * @param dashboard           serve the live dashboard at /dashboard ({@link Dashboard})
 * @param kvEvents            where each engine publishes vLLM's KV-cache events over ZMQ; null for none
 * @param dataParallelSize    engines behind this one port ({@code --data-parallel-size}), each a full copy of the
 *                            deployment with its own KV cache, balanced as vLLM's internal load balancer does
 * @param fixedTiming         fixed per-request latencies in place of the cost model ({@code --timing fixed}), drawn
 *                            from {@code seed} (plus the replica and rank); null for engine timing
 * @param truthLog            where every finished choice's timeline goes ({@code --truth-log}), shared by a fleet's
 *                            replicas and served at {@code GET /infersim/truth}; null for none
 * @param loraModules         adapters served from start ({@code --lora-modules}); LoRA itself is on when the
 *                            deployment has a {@link dev.infersim.engine.LoraConfig}
 * @param runtimeLoraUpdating serve {@code POST /v1/load_lora_adapter} and {@code /v1/unload_lora_adapter}, as vLLM
 *                            does only under {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING=1}
 * @param features            tool calling, reasoning, pooling and sleep mode ({@link ModelFeatures}), and vLLM's development
 *                            mode; null for none
 * @param listenWhileLoading  listen during the cold start and answer 503 there and while draining (infersim's former
 *                            health, a readiness probe's view); by default nothing listens until the model has loaded
 *                            and /health stays 200 while in-flight requests drain, as vLLM
 * @param metrics             how /metrics renders the series routers read ({@code --lora-metrics-by-queue}, ...)
 * @param tokenizer           tokenizes prompts ({@code --tokenizer}: the model's tokenizer.json); null for cl100k_base
 * @param pod                 the Kubernetes pod this server runs as ({@code POD_NAME}, {@code POD_NAMESPACE},
 *                            {@code POD_IP}): response headers and the default KV-event topic name it
 * @param timeouts            how long connections may wait for a request, its head, or any traffic
 * @param kvTransfer          the KV connector for prefill/decode disaggregation ({@code --kv-transfer-config}); null for
 *                            none
 * @param grpc                where vLLM's gRPC engine service is served ({@code --grpc-port}); null for nowhere
 * @param datasetReplies      replies stored for prompts ({@code --dataset-responses}), shared by a fleet's replicas;
 *                            null to answer every prompt with synthetic text
 */
public record ServerOptions(Deployment deployment, String schedulingPolicy, List<String> servedModelNames, String host, int port,
                            String apiKey, double timeScale, int maxWaitingRequests, OutputMode outputMode, long seed,
                            LengthDistribution eosPosition, FaultSettings faults, long maxBodyBytes, int eventLoops,
                            boolean realtimeEngine, boolean realtimeEventLoops, int replica, StartupDelay startupDelay,
                            boolean dashboard, int dataParallelSize, FixedTiming fixedTiming,
                            KvEventsConfig kvEvents, TruthLog truthLog, List<LoraModule> loraModules,
                            boolean runtimeLoraUpdating, ModelFeatures features, boolean listenWhileLoading,
                            MetricsOptions metrics, PromptTokenizer tokenizer, PodIdentity pod, HttpTimeouts timeouts,
                            KvTransferConfig kvTransfer, GrpcOptions grpc, DatasetReplies datasetReplies) {

    /** Engine threads of one server; each models a whole GPU group, so more would only share this host's cores thinner. */
    public static final int MAX_DATA_PARALLEL_SIZE = 64;

    public ServerOptions {
        Objects.requireNonNull(deployment, "deployment");
        SchedulingPolicies.byName(schedulingPolicy);
        servedModelNames = servedModelNames == null || servedModelNames.isEmpty()
                ? List.of(deployment.model().name()) : List.copyOf(servedModelNames);
        for (String name : servedModelNames) {
            check(!name.isBlank(), "--served-model-name must not be blank");
        }
        Objects.requireNonNull(host, "host");
        check(port >= 0 && port <= 65535, "--port must be in 0..65535, got " + port);
        check(timeScale > 0 && Double.isFinite(timeScale), "--time-scale must be a positive number, got " + timeScale);
        // Each request waits at least until the engine thread takes it in, so 0 would refuse every request.
        check(maxWaitingRequests >= 1, "--max-waiting-requests must be >= 1, got " + maxWaitingRequests);
        Objects.requireNonNull(outputMode, "outputMode");
        Objects.requireNonNull(faults, "faults");
        check(maxBodyBytes >= 1024, "max body bytes must be >= 1024, got " + maxBodyBytes);
        check(eventLoops >= 0, "event loops must be >= 0, got " + eventLoops);
        check(replica >= 0, "replica index must be >= 0, got " + replica);
        Objects.requireNonNull(startupDelay, "startupDelay");
        check(dataParallelSize >= 1 && dataParallelSize <= MAX_DATA_PARALLEL_SIZE,
                "--data-parallel-size must be between 1 and " + MAX_DATA_PARALLEL_SIZE + ", got " + dataParallelSize);
        loraModules = loraModules == null ? List.of() : List.copyOf(loraModules);
        check(loraModules.isEmpty() || deployment.lora() != null, "--lora-modules needs --enable-lora");
        java.util.Set<String> adapters = new java.util.HashSet<>();
        for (LoraModule m : loraModules) {
            check(adapters.add(m.name()), "--lora-modules: adapter " + m.name() + " is listed twice");
        }
        // An empty key would be a server that looks protected and is not: refuse it rather than serve without one.
        check(apiKey == null || !apiKey.isEmpty(), "--api-key must not be empty (leave it out to serve without a key)");
        features = features == null ? ModelFeatures.NONE : features;
        pod = pod == null ? PodIdentity.NONE : pod;
        metrics = metrics == null ? MetricsOptions.VLLM : metrics;
        Objects.requireNonNull(timeouts, "timeouts");
        check(kvTransfer == null || fixedTiming == null,
                "--kv-transfer-config needs the engine's cost model, not --timing fixed");
    }

    /** The name responses and metrics report whichever served name a request used (vLLM's first served name). */
    public String servedModelName() {
        return servedModelNames.get(0);
    }

    /** The same settings for replica {@code index} of a fleet, on {@code port} (0: any free one). */
    public ServerOptions forReplica(int index, int port) {
        return new ServerOptions(deployment, schedulingPolicy, servedModelNames, host, port, apiKey, timeScale,
                maxWaitingRequests, outputMode, seed, eosPosition, faults, maxBodyBytes, eventLoops, realtimeEngine,
                realtimeEventLoops, index, startupDelay, dashboard, dataParallelSize, fixedTiming, kvEvents, truthLog,
                loraModules, runtimeLoraUpdating, features, listenWhileLoading, metrics, tokenizer, pod, timeouts, kvTransfer,
                grpc == null ? null : grpc.forReplica(index), datasetReplies);
    }

    /** vLLM-like defaults for a deployment: 127.0.0.1:8000, real time, no key, 1,000 waiting requests, lorem text, seed 0. */
    public static Builder builder(Deployment deployment) {
        return new Builder(deployment);
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Mutable builder with the defaults of {@code infersim serve}. */
    public static final class Builder {
        private final Deployment deployment;
        private String schedulingPolicy = "fcfs";
        private List<String> servedModelNames;
        private String host = "127.0.0.1";
        private int port = 8000;
        private String apiKey;
        private double timeScale = 1;
        private int maxWaitingRequests = 1000;
        private OutputMode outputMode = OutputMode.LOREM;
        private long seed;
        private LengthDistribution eosPosition;
        private FaultSettings faults = FaultSettings.NONE;
        private long maxBodyBytes = 16L << 20;
        private int eventLoops;
        private boolean realtimeEngine;
        private boolean realtimeEventLoops;
        private int replica;
        private StartupDelay startupDelay = StartupDelay.NONE;
        private boolean dashboard;
        private int dataParallelSize = 1;
        private FixedTiming fixedTiming;
        private KvEventsConfig kvEvents;
        private TruthLog truthLog;
        private List<LoraModule> loraModules;
        private boolean runtimeLoraUpdating;
        private ModelFeatures features;
        private boolean listenWhileLoading;
        private MetricsOptions metrics = MetricsOptions.VLLM;
        private PromptTokenizer tokenizer;
        private PodIdentity pod = PodIdentity.NONE;
        private HttpTimeouts timeouts = HttpTimeouts.DEFAULTS;
        private KvTransferConfig kvTransfer;
        private GrpcOptions grpc;
        private DatasetReplies datasetReplies;

        private Builder(Deployment deployment) {
            this.deployment = deployment;
        }

        public Builder schedulingPolicy(String v) { schedulingPolicy = v; return this; }
        public Builder servedModelName(String v) { servedModelNames = v == null ? null : List.of(v); return this; }
        public Builder servedModelNames(List<String> v) { servedModelNames = v; return this; }
        public Builder host(String v) { host = v; return this; }
        public Builder port(int v) { port = v; return this; }
        public Builder apiKey(String v) { apiKey = v; return this; }
        public Builder timeScale(double v) { timeScale = v; return this; }
        public Builder maxWaitingRequests(int v) { maxWaitingRequests = v; return this; }
        public Builder outputMode(OutputMode v) { outputMode = v; return this; }
        public Builder seed(long v) { seed = v; return this; }
        public Builder eosPosition(LengthDistribution v) { eosPosition = v; return this; }
        public Builder faults(FaultSettings v) { faults = v; return this; }
        public Builder maxBodyBytes(long v) { maxBodyBytes = v; return this; }
        public Builder eventLoops(int v) { eventLoops = v; return this; }
        public Builder realtimeEngine(boolean v) { realtimeEngine = v; return this; }
        public Builder realtimeEventLoops(boolean v) { realtimeEventLoops = v; return this; }
        public Builder replica(int v) { replica = v; return this; }
        public Builder startupDelay(StartupDelay v) { startupDelay = v; return this; }
        public Builder dashboard(boolean v) { dashboard = v; return this; }
        public Builder dataParallelSize(int v) { dataParallelSize = v; return this; }
        public Builder kvEvents(KvEventsConfig v) { kvEvents = v; return this; }

        public Builder fixedTiming(FixedTiming v) { fixedTiming = v; return this; }
        public Builder truthLog(TruthLog v) { truthLog = v; return this; }
        public Builder loraModules(List<LoraModule> v) { loraModules = v; return this; }
        public Builder runtimeLoraUpdating(boolean v) { runtimeLoraUpdating = v; return this; }
        public Builder features(ModelFeatures v) { features = v; return this; }
        public Builder listenWhileLoading(boolean v) { listenWhileLoading = v; return this; }
        public Builder metrics(MetricsOptions v) { metrics = v; return this; }
        public Builder tokenizer(PromptTokenizer v) { tokenizer = v; return this; }
        public Builder pod(PodIdentity v) { pod = v; return this; }
        public Builder timeouts(HttpTimeouts v) { timeouts = v; return this; }

        /** vLLM's development mode ({@code VLLM_SERVER_DEV_MODE=1}), the other features as they are. */
        public Builder devMode(boolean v) {
            ModelFeatures f = features == null ? ModelFeatures.NONE : features;
            features = f.withSleepMode(f.enableSleepMode(), v, f.loadBandwidthGbps());
            return this;
        }
        public Builder kvTransfer(KvTransferConfig v) { kvTransfer = v; return this; }
        public Builder grpc(GrpcOptions v) { grpc = v; return this; }
        public Builder datasetReplies(DatasetReplies v) { datasetReplies = v; return this; }

        public ServerOptions build() {
            return new ServerOptions(deployment, schedulingPolicy, servedModelNames, host, port, apiKey, timeScale,
                    maxWaitingRequests, outputMode, seed, eosPosition, faults, maxBodyBytes, eventLoops, realtimeEngine,
                    realtimeEventLoops, replica, startupDelay, dashboard, dataParallelSize, fixedTiming, kvEvents, truthLog,
                    loraModules, runtimeLoraUpdating, features, listenWhileLoading, metrics, tokenizer, pod, timeouts, kvTransfer,
                    grpc, datasetReplies);
        }
    }
}
