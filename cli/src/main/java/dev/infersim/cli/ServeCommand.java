package dev.infersim.cli;

import dev.infersim.cli.options.ConfigFile;
import dev.infersim.cli.options.DeploymentOptions;
import dev.infersim.cli.options.FaultOptions;
import dev.infersim.cli.options.HttpTimeoutOptions;
import dev.infersim.cli.options.KvEventsOptions;
import dev.infersim.cli.options.KvTransferOptions;
import dev.infersim.cli.options.LoraOptions;
import dev.infersim.cli.options.ModelFeatureOptions;
import dev.infersim.cli.options.OptionGroup;
import dev.infersim.cli.options.TimingOptions;
import dev.infersim.cli.options.TruthLogOptions;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.StartupDelay;
import dev.infersim.server.config.KvTransferConfig;
import dev.infersim.server.fleet.MockFleet;
import dev.infersim.server.observe.FakeMetrics;
import dev.infersim.server.config.FaultSettings;
import dev.infersim.server.fleet.FrontDoor;
import dev.infersim.server.fleet.JitWarmup;
import dev.infersim.server.text.DatasetReplies;
import dev.infersim.server.config.GrpcOptions;
import dev.infersim.sim.Routers;
import dev.infersim.sim.TieBreak;
import dev.infersim.workload.length.LengthDistribution;
import dev.infersim.workload.length.LengthLaws;
import dev.infersim.server.config.MetricsOptions;
import dev.infersim.server.config.OutputMode;
import dev.infersim.server.config.PodIdentity;
import dev.infersim.server.text.PromptTokenizer;
import dev.infersim.server.config.LoraModule;
import dev.infersim.server.config.ServerOptions;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code infersim serve}: an OpenAI-compatible mock of {@code vllm serve}, every token timed by the engine model on the
 * real clock. Flags mirror vLLM's; {@code --config FILE} reads the same flags from YAML ({@link ServeConfigFile});
 * flags on the command line win.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run an OpenAI-compatible mock LLM server timed by the engine model (vLLM API, SSE and metrics).")
public final class ServeCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Mixin
    DeploymentOptions deployment;

    @Mixin
    TimingOptions timing;

    @Mixin
    LoraOptions lora;

    @Mixin
    ModelFeatureOptions features;

    @OptionGroup.In(OptionGroup.LORA)
    @Option(names = "--lora-modules", arity = "1..*", paramLabel = "NAME=PATH|JSON",
            description = "LoRA adapters served from start, as name=path or vLLM's JSON {\"name\": .., \"path\": .., "
                    + "\"base_model_name\": ..}; the path is only recorded (needs --enable-lora). POST "
                    + "/v1/load_lora_adapter and /v1/unload_lora_adapter exist when VLLM_ALLOW_RUNTIME_LORA_UPDATING is 1 "
                    + "or true, as in vLLM.")
    List<String> loraModules = new ArrayList<>();

    @OptionGroup.In(OptionGroup.SERVER)
    @Option(names = "--served-model-name", arity = "1..*", paramLabel = "NAME",
            description = "Model ids clients may send, each listed by /v1/models; responses and metrics name the first, "
                    + "as vLLM's do (default: the model profile's name).")
    List<String> servedModelNames;

    @OptionGroup.In(OptionGroup.SERVER)
    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Interface to bind (default: ${DEFAULT-VALUE}).")
    String host;

    @OptionGroup.In(OptionGroup.SERVER)
    @Option(names = "--port", defaultValue = "8000", description = "TCP port; 0 picks a free one (default: ${DEFAULT-VALUE}).")
    int port;

    @OptionGroup.In(OptionGroup.SERVER)
    @Option(names = "--api-key", paramLabel = "KEY", defaultValue = "${env:VLLM_API_KEY}",
            description = "Require 'Authorization: Bearer KEY' on /v1 and /admin routes (default: $VLLM_API_KEY, else none); "
                    + "an empty KEY is refused.")
    String apiKey;

    @OptionGroup.In(OptionGroup.TIMING)
    @Option(names = "--time-scale", defaultValue = "1",
            description = "Run this many times faster than the modelled GPU (model time = wall time x scale; default: ${DEFAULT-VALUE}).")
    double timeScale;

    @OptionGroup.In(OptionGroup.SERVER)
    @Option(names = "--max-waiting-requests", defaultValue = "1000",
            description = "Accepted-but-unscheduled requests beyond which new ones get 429 (default: ${DEFAULT-VALUE}).")
    int maxWaitingRequests;

    @OptionGroup.In(OptionGroup.ANSWERS)
    @Option(names = "--output-mode", defaultValue = "lorem", description = "lorem (seeded words) or echo (the prompt) (default: ${DEFAULT-VALUE}).")
    String outputMode;

    @OptionGroup.In(OptionGroup.ANSWERS)
    @Option(names = "--seed", defaultValue = "0", description = "Seed for text and output lengths of unseeded requests (default: ${DEFAULT-VALUE}).")
    long seed;

    @OptionGroup.In(OptionGroup.ANSWERS)
    @Option(names = "--output-len-dist", defaultValue = "none", paramLabel = "SPEC",
            description = "Where the model emits EOS in requests without ignore_eos: none (never: every request runs to "
                    + "max_tokens, as simulate does), fixed:N, uniform:MIN:MAX, geometric:MEAN, lognormal:MEDIAN:SIGMA "
                    + "(default: ${DEFAULT-VALUE}); always capped by max_tokens.")
    String outputLenDist;

    @OptionGroup.In(OptionGroup.SERVER)
    @Option(names = "--shutdown-grace-ms", defaultValue = "5000",
            description = "On SIGINT/SIGTERM, let in-flight requests finish this long before aborting them (default: ${DEFAULT-VALUE}).")
    long shutdownGraceMs;

    @OptionGroup.In(OptionGroup.TIMING)
    @Option(names = "--realtime-engine", negatable = true,
            description = "Run the engine thread under Linux's SCHED_FIFO (needs chrt and root or CAP_SYS_NICE), spinning "
                    + "the last 6 ms before each step's end: steps then end within microseconds of plan on a busy machine, "
                    + "not milliseconds, for up to 6 ms of one core per step.")
    boolean realtimeEngine;

    @OptionGroup.In(OptionGroup.TIMING)
    @Option(names = "--realtime-event-loops", negatable = true,
            description = "Run the event loops that serve HTTP under Linux's SCHED_FIFO, below a --realtime-engine thread (needs "
                    + "chrt and root or CAP_SYS_NICE): a loop then reads a request as soon as its bytes arrive, not when "
                    + "the scheduler next gives it a core, so the truth's received_ms is the wire's. A loop kept busy by "
                    + "more streams than the cores serve takes the cores from everything else on the machine.")
    boolean realtimeEventLoops;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--replicas", defaultValue = "1", paramLabel = "N",
            description = "Independent replicas in this process, replica i on --port + i (any free port each with --port 0), "
                    + "each with its own engine, KV cache, /metrics and /health; GET|POST /admin/replicas on the first "
                    + "port resizes the fleet (default: ${DEFAULT-VALUE}).")
    int replicas;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--router", paramLabel = "NAME",
            description = "Put a front door on --port (replicas on the ports after it) that routes every completion with "
                    + "the router simulate --router runs: round-robin, least-outstanding-requests, least-kv-usage, "
                    + "power-of-two-choices (seeded by --seed), prefix-affinity or lora-affinity; streams pass through "
                    + "untouched, decisions go to the truth log, /admin/replicas lives there (default: no front door).")
    String router;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--router-tie-break", defaultValue = "round-robin", paramLabel = "round-robin|lowest-index",
            description = "How the front door's router chooses among equally scored replicas: round-robin (nginx, "
                    + "HAProxy) or lowest-index (Vidur) (default: ${DEFAULT-VALUE}).")
    String routerTieBreak;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--data-parallel-size", defaultValue = "1", paramLabel = "N",
            description = "Engines behind each replica's one port, each with its own KV cache, balanced as vLLM's internal "
                    + "load balancer does (lowest waiting x 4 + running; header X-data-parallel-rank pins one); metrics "
                    + "labelled engine=\"0\"..\"N-1\" (default: ${DEFAULT-VALUE}).")
    int dataParallelSize;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--kv-transfer-config", paramLabel = "JSON",
            description = "vLLM's KV connector for prefill/decode disaggregation: {\"kv_connector\": \"NixlConnector\", "
                    + "\"kv_role\": \"kv_producer|kv_consumer|kv_both\", \"engine_id\", \"kv_connector_extra_config\": "
                    + "{\"kv_lease_duration\": 30}}. kv_transfer_params do_remote_decode then prefill and hold the KV, "
                    + "do_remote_prefill pull it; the side channel listens on VLLM_NIXL_SIDE_CHANNEL_HOST:PORT (localhost:5600).")
    String kvTransferConfig;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--kv-transfer-peers", paramLabel = "HOST[,HOST...]", split = ",",
            description = "Hosts a decode request's kv_transfer_params.remote_host may name, compared as written (never "
                    + "resolved), besides this fleet's own side-channel host (default: localhost, 127.0.0.1, ::1). Any "
                    + "other is refused with 400: a request cannot make the mock connect to a host of its choosing.")
    java.util.List<String> kvTransferPeers;

    @Mixin
    KvTransferOptions kvTransferLink;

    @Mixin
    KvEventsOptions kvEvents;

    @Mixin
    FaultOptions faults;

    @Mixin
    HttpTimeoutOptions timeouts;

    @Mixin
    TruthLogOptions truthLog;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--startup-delay", defaultValue = "0", paramLabel = "auto|SECONDS",
            description = "Cold start in model seconds before a replica serves (nothing listens meanwhile, as vLLM; 503 with --listen-while-loading); "
                    + "auto = weight bytes / --load-bandwidth-gbps + CUDA-graph capture time (default: ${DEFAULT-VALUE}).")
    String startupDelay;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--load-bandwidth-gbps", defaultValue = "" + StartupDelay.DEFAULT_LOAD_BANDWIDTH_GBPS, paramLabel = "GB/s",
            description = "Gigabytes per second read while loading weights, for --startup-delay auto, and LoRA adapters "
                    + "missing from host memory (default: ${DEFAULT-VALUE}, a vLLM startup log's 14.99 GiB in 4.75 s from "
                    + "local disk).")
    double loadBandwidthGbps;

    @OptionGroup.In(OptionGroup.OBSERVE)
    @Option(names = "--dashboard", description = "Serve a live dashboard at /dashboard: running and waiting requests, KV "
            + "usage, tokens and time per step, TTFT and ITL histograms, arrival and completion rates and Little's law, "
            + "pushed every half second.")
    boolean dashboard;

    @OptionGroup.In(OptionGroup.SERVER)
    @Option(names = "--listen-while-loading",
            description = "Listen during the cold start and answer 503 there (and on /health once shutdown began), as "
                    + "a pod behind a readiness probe looks; by default nothing listens until the model has loaded "
                    + "(connections are refused) and /health stays 200 while requests drain, as vLLM.")
    boolean listenWhileLoading;

    @OptionGroup.In(OptionGroup.ANSWERS)
    @Option(names = "--dataset-responses", paramLabel = "FILE",
            description = "Answer a prompt with a reply a conversation dataset stores for it, as llm-d-inference-sim: "
                    + "its dataset tool's SQLite file, JSON, or JSON Lines of {prompt_hash, gen_tokens}, matched by the "
                    + "SHA-256 of the prompt's token ids (tokenize as the dataset was: --tokenizer); a prompt it does not "
                    + "hold gets the synthetic text; the truth log says which (default: synthetic text only).")
    Path datasetResponses;

    @OptionGroup.In(OptionGroup.SERVER)
    @Option(names = "--grpc-port", paramLabel = "PORT|http",
            description = "Also serve vLLM's gRPC engine service (vllm.grpc.engine.VllmEngine: Generate, Embed, "
                    + "HealthCheck, Abort, GetModelInfo, GetServerInfo, GetLoads; server reflection on), HTTP/2 "
                    + "cleartext: on PORT (replica i on PORT + i; 0 any free port), or 'http' on --port itself beside "
                    + "the HTTP API, as llm-d-inference-sim (default: not served).")
    String grpcPort;

    @OptionGroup.In(OptionGroup.OBSERVE)
    @Option(names = "--lora-metrics-by-queue",
            description = "Fill vllm:lora_requests_info's waiting_lora_adapters and running_lora_adapters from the "
                    + "scheduler's waiting and running queues, as vLLM did before its PR #26801 (2025-11) and "
                    + "llm-d-inference-sim does; by default both list every adapter with an unfinished request, as current vLLM.")
    boolean loraMetricsByQueue;

    @OptionGroup.In(OptionGroup.OBSERVE)
    @Option(names = "--legacy-vllm-metrics",
            description = "Also serve vllm:gpu_cache_usage_perc and vllm:time_per_output_token_seconds, which vLLM 0.10 and "
                    + "older served and older endpoint pickers scrape.")
    boolean legacyMetrics;

    @OptionGroup.In(OptionGroup.OBSERVE)
    @Option(names = "--fake-metrics", paramLabel = "JSON",
            description = "Fixed values /metrics reports instead of the engine's, as llm-d-inference-sim's flag: "
                    + "{\"running-requests\": 10, \"waiting-requests\": 30, \"kv-cache-usage\": 0.4, \"loras\": [{\"running\": "
                    + "\"a,b\", \"waiting\": \"c\", \"timestamp\": 1257894567}], \"ttft-buckets-values\": [1, 2, 3], ...}.")
    String fakeMetrics;

    @OptionGroup.In(OptionGroup.ANSWERS)
    @Option(names = "--tokenizer", paramLabel = "FILE",
            description = "The model's HuggingFace tokenizer.json, read offline: prompts get the token ids vLLM would give "
                    + "them (the tokenizer's BOS included), so usage counts, prefix caching and KV-event hashes match what "
                    + "a router computes with the same file (default: cl100k_base).")
    Path tokenizer;

    @OptionGroup.In(OptionGroup.SERVER)
    @Option(names = "--warmup", arity = "0..1", defaultValue = "0", fallbackValue = "" + JitWarmup.DEFAULT_REQUESTS,
            paramLabel = "N",
            description = "Before listening, send N requests (default with the flag: " + JitWarmup.DEFAULT_REQUESTS
                    + ") to a throwaway server of the same model and features on a free loopback port, so that the JIT "
                    + "has compiled the server before the first measured run; nothing of them reaches this server's "
                    + "metrics, truth log or cache. Prints how many and how long (some seconds). 0: none (default).")
    int warmup;

    @OptionGroup.In(OptionGroup.CONFIG)
    @Option(names = "--config", paramLabel = "FILE", description = "YAML file of these flags (keys without '--'); command-line flags win.")
    Path config;

    @Override
    public void run() {
        if (config == null) {
            serve(options());
            return;
        }
        ConfigFile file = ConfigFile.read(config, spec);
        ServeCommand merged = file.parse(new ServeCommand());
        ServerOptions options;
        try {
            options = merged.options();
        } catch (RuntimeException e) {
            throw file.attribute(e);
        }
        merged.serve(options);
    }

    private ServerOptions options() {
        try {
            if (warmup < 0) {
                throw new IllegalArgumentException("--warmup must be >= 0 requests, got " + warmup);
            }
            if (shutdownGraceMs < 0) {
                throw new IllegalArgumentException("--shutdown-grace-ms must be >= 0, got " + shutdownGraceMs);
            }
            FaultSettings faultSettings = faults.settings();
            if (replicas < 1 || replicas > MockFleet.MAX_REPLICAS) {
                throw new IllegalArgumentException("--replicas must be between 1 and " + MockFleet.MAX_REPLICAS + ", got " + replicas);
            }
            if (port > 0 && port + replicas - 1 > 65535) {
                throw new IllegalArgumentException("--port " + port + " + --replicas " + replicas + " runs past port 65535");
            }
            if (router != null) {
                Routers.byName(router, 0);
                TieBreak.parse("--router-tie-break", routerTieBreak);
                if (port > 0 && port + replicas > 65535) {
                    throw new IllegalArgumentException("--port " + port + " + --replicas " + replicas + " runs past port 65535");
                }
            }
            var d = lora.apply(deployment.deployment(), loadBandwidthGbps);
            if (d.numSchedulerSteps() != 1) {
                // the mock streams each token at its step's end and checks stop strings a token ahead; a round's
                // tokens released together at its end are modelled by simulate only
                throw new IllegalArgumentException("--num-scheduler-steps " + d.numSchedulerSteps()
                        + ": multi-step rounds are modelled by simulate, not by the mock server; serve with 1");
            }
            StartupDelay delay = StartupDelay.parse(startupDelay, d, loadBandwidthGbps);
            return ServerOptions.builder(d).schedulingPolicy(deployment.schedulingPolicy).startupDelay(delay)
                    .dataParallelSize(dataParallelSize).kvEvents(kvEvents.settings(host, spec.commandLine().getParseResult()))
                    .servedModelNames(servedModelNames).host(host).port(port).apiKey(apiKey()).timeScale(timeScale)
                    .maxWaitingRequests(maxWaitingRequests).outputMode(OutputMode.parse(outputMode)).seed(seed)
                    .eosPosition(eosPosition()).faults(faultSettings).realtimeEngine(realtimeEngine)
                    .realtimeEventLoops(realtimeEventLoops)
                    .dashboard(dashboard)
                    .loraModules(loraModules.stream().map(LoraModule::parse).toList())
                    .runtimeLoraUpdating(runtimeLoraUpdating(System.getenv("VLLM_ALLOW_RUNTIME_LORA_UPDATING")))
                    .fixedTiming(timing.fixedTiming())
                    .features(features.features(System.getenv("VLLM_SERVER_DEV_MODE"), loadBandwidthGbps))
                    .pod(PodIdentity.from(System.getenv()))
                    .metrics(new MetricsOptions(loraMetricsByQueue, legacyMetrics,
                            fakeMetrics == null ? null : FakeMetrics.parse(fakeMetrics))).listenWhileLoading(listenWhileLoading)
                    .tokenizer(tokenizer == null ? null : PromptTokenizer.huggingFace(tokenizer))
                    .kvTransfer(kvTransfer(System.getenv("VLLM_NIXL_SIDE_CHANNEL_HOST"), System.getenv("VLLM_NIXL_SIDE_CHANNEL_PORT")))
                    .timeouts(timeouts.timeouts()).grpc(grpcPort == null ? null : GrpcOptions.parse(grpcPort))
                    .datasetReplies(datasetResponses == null ? null : DatasetReplies.load(datasetResponses))
                    .truthLog(truthLog.open()).build();
        } catch (IllegalArgumentException | ConfigException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /** The KV connector of --kv-transfer-config, its side channel where vLLM's environment puts it; null for none. */
    private KvTransferConfig kvTransfer(String hostEnv, String portEnv) {
        if (kvTransferConfig == null) {
            if (kvTransferPeers != null) {
                throw new IllegalArgumentException("--kv-transfer-peers needs --kv-transfer-config (a KV connector)");
            }
            return null;
        }
        int port = KvTransferConfig.DEFAULT_SIDE_CHANNEL_PORT;
        if (portEnv != null) {
            try {
                port = Integer.parseInt(portEnv.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("VLLM_NIXL_SIDE_CHANNEL_PORT must be a port number, got '" + portEnv + "'");
            }
        }
        KvTransferConfig c = KvTransferConfig.fromVllmJson(kvTransferConfig,
                hostEnv == null || hostEnv.isBlank() ? KvTransferConfig.DEFAULT_SIDE_CHANNEL_HOST : hostEnv, port,
                kvTransferLink.link());
        if (kvTransferPeers != null) {
            if (c == null) {
                throw new IllegalArgumentException("--kv-transfer-peers needs --kv-transfer-config with a kv_connector");
            }
            c = c.withPeers(new java.util.LinkedHashSet<>(kvTransferPeers));
        }
        if (c != null && c.engineId() != null && replicas > 1) {
            throw new IllegalArgumentException("--kv-transfer-config engine_id names one engine; with --replicas leave it out "
                    + "(each replica draws its own)");
        }
        if (c != null && c.sideChannelPort() > 0 && c.sideChannelPort() + replicas * dataParallelSize - 1 > 65535) {
            throw new IllegalArgumentException("VLLM_NIXL_SIDE_CHANNEL_PORT " + c.sideChannelPort() + " + one port per engine "
                    + "runs past port 65535");
        }
        return c;
    }

    /**
     * The key: an empty {@code --api-key} is refused (by {@link ServerOptions}), an empty {@code VLLM_API_KEY} is no key,
     * as vLLM reads its environment.
     */
    private String apiKey() {
        boolean given = spec.commandLine().getParseResult().hasMatchedOption("--api-key");
        return !given && apiKey != null && apiKey.isEmpty() ? null : apiKey;
    }

    /** vLLM's test of VLLM_ALLOW_RUNTIME_LORA_UPDATING: "1" or "true", in any case. */
    static boolean runtimeLoraUpdating(String env) {
        return env != null && (env.equals("1") || env.equalsIgnoreCase("true"));
    }

    private LengthDistribution eosPosition() {
        try {
            return LengthLaws.parse(outputLenDist);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--output-len-dist '" + outputLenDist + "': " + e.getMessage());
        }
    }

    private String portRange() {
        return replicas > 1 && port > 0 ? ".." + (port + replicas - 1) : "";
    }

    private void serve(ServerOptions options) {
        String hashWarning = HashSeedWarning.message(options.deployment(), replicas);
        if (hashWarning != null) {
            System.err.println(hashWarning);
        }
        try {
            warmUp(options);
            serveFleet(options);
        } finally {
            truthLog.close(options.truthLog());
        }
    }

    /** {@code --warmup N}: the JIT warmed on a throwaway server before this one listens ({@link JitWarmup}). */
    private void warmUp(ServerOptions options) {
        if (warmup == 0) {
            return;
        }
        try {
            System.out.println(JitWarmup.run(options, warmup).describe());
            System.out.flush();
        } catch (IOException e) {
            throw new ConfigException("--warmup: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while warming up", e);
        }
    }

    private void serveFleet(ServerOptions options) {
        MockFleet fleet;
        FrontDoor door = null;
        try {
            // Each replica prints its ready line when its model has loaded, later ones (POST /admin/replicas) included.
            java.util.function.Consumer<dev.infersim.server.fleet.MockServer> ready = server -> {
                System.out.println(server.readyLine());
                System.out.flush();
            };
            if (router == null) {
                fleet = MockFleet.start(options, replicas, Duration.ofMillis(shutdownGraceMs), ready)
                        .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
            } else {
                door = FrontDoor.start(options, replicas, Duration.ofMillis(shutdownGraceMs), ready, router,
                        TieBreak.parse("--router-tie-break", routerTieBreak)).toCompletionStage().toCompletableFuture()
                        .get(60, TimeUnit.SECONDS);
                fleet = door.fleet();
                System.out.println("infersim front door at " + door.baseUrl() + "/v1 routing with " + router + " over "
                        + replicas + " replica" + (replicas > 1 ? "s" : "") + "; /admin/replicas there");
                System.out.flush();
            }
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            // Any I/O failure while starting is the address: a busy port, a host name that does not resolve, an address
            // of no local interface. Vert.x's native transport reports these as its own IOException subclasses (not
            // BindException), and a resolver failure may be wrapped, so look down the cause chain for one.
            for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (t instanceof IOException) {
                    throw new ConfigException("--host " + host + " --port " + port + portRange() + ": cannot listen ("
                            + String.valueOf(t.getMessage()).trim() + ")");
                }
            }
            if (cause instanceof ConfigException c) {
                throw c;
            }
            throw new IllegalStateException("server failed to start", cause);
        } catch (InterruptedException | TimeoutException e) {
            throw new IllegalStateException("server failed to start", e);
        }
        FrontDoor frontDoor = door;
        if (options.dashboard()) {
            System.out.println("infersim dashboard at " + fleet.baseUrl() + "/dashboard"
                    + (replicas > 1 ? " (every replica)" : ""));
            System.out.flush();
        }
        CountDownLatch stopped = new CountDownLatch(1);
        EarlyInterrupt.handOver(); // from here an interrupt is the normal way to stop the server
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                (frontDoor != null ? frontDoor.close(Duration.ofMillis(shutdownGraceMs))
                        : fleet.close(Duration.ofMillis(shutdownGraceMs))).toCompletionStage().toCompletableFuture()
                        .get(shutdownGraceMs + 15_000, TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                System.err.println("infersim: shutdown: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            }
            truthLog.close(options.truthLog()); // here: the JVM may halt before the main thread runs again
            stopped.countDown();
        }, "infersim-shutdown"));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
