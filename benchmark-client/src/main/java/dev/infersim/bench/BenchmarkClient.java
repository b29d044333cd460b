package dev.infersim.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.config.RunPlan;
import dev.infersim.bench.measure.ClientGc;
import dev.infersim.bench.measure.ErrorTally;
import dev.infersim.bench.measure.LoopCpu;
import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.bench.measure.MetricsScraper;
import dev.infersim.bench.measure.SchedulingNoise;
import dev.infersim.bench.measure.TerminalText;
import dev.infersim.bench.report.BenchResult;
import dev.infersim.bench.report.BenchResultAssembly;
import dev.infersim.bench.run.ClientClock;
import dev.infersim.bench.run.HuggingFaceTokenCounter;
import dev.infersim.bench.run.LaneConnections;
import dev.infersim.bench.run.LoadRun;
import dev.infersim.bench.run.PromptRenderer;
import dev.infersim.bench.run.TokenCounter;
import dev.infersim.common.ConfigException;
import dev.infersim.common.SplitMix64;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.LatencyStats;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.workload.Shard;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Context;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpConnectOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.internal.VertxInternal;

import java.net.URI;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Benchmarks an OpenAI-compatible streaming endpoint with a workload: an optional warmup (discarded), then the measured
 * run, then a {@link BenchResult} in the vLLM result schema plus infersim's client-side keys. One Vert.x instance
 * with one lane per core: an event loop and the keep-alive connections only it uses ({@link LaneConnections}), so
 * per-chunk recording needs no locks. Reusable for several runs (sweeps); {@link #stop()} from another thread ends the current run
 * early, and what it measured is still returned.
 */
public final class BenchmarkClient implements AutoCloseable {
    private static final long CALIBRATION_NANOS = 300_000_000;
    /** A client warm-up request's prompt and output at most: the code paths matter, not the lengths. */
    private static final int WARMUP_PROMPT_TOKENS = 64;
    private static final int WARMUP_OUTPUT_TOKENS = 8;
    private static final int WARMUP_USERS = 8;
    private static final DateTimeFormatter VLLM_DATE = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private final BenchConfig config;
    private final Vertx vertx;
    private final List<HttpClientAgent> clients = new ArrayList<>();
    /**
     * Failures of the initial test request that say "not ready yet" rather than "wrong": nothing listening (a vLLM
     * loading its model), 503 (a server or front door with no ready replica), 502/504 (a gateway whose backends are
     * not up). vLLM's ready check retries on any failure; a 404 or 400 will not heal, so here it fails at once.
     */
    private static final java.util.Set<String> NOT_READY = java.util.Set.of("connect_failed", "connection_reset",
            "http_502", "http_503", "http_504");
    /** Between two test requests while waiting (vLLM waits 5 s; a mock or a local gateway is ready sooner). */
    private static final long READY_RETRY_MILLIS = 500;
    private final ClientClock clock;
    private final LoadRun load;
    private final TokenCounter counter;
    private final LoopCpu loopCpu;
    private final List<EventExecutor> eventLoops = new ArrayList<>();
    /** The result's keys, with the wake-up lateness of an idle probe thread measured once before the first run. */
    private BenchResultAssembly results;
    /** Whether the client's warm-up requests went out (once, before the first run). */
    private boolean warmedUp;

    /** Connects nothing yet; builds the cl100k_base vocabulary (about a second). */
    public BenchmarkClient(BenchConfig config) {
        this(config, null);
    }

    /**
     * @param tokenizer a HuggingFace {@code tokenizer.json} to count the tokens of servers that report no usage per
     *                  chunk ({@code --tokenizer}), or null for cl100k_base
     */
    public BenchmarkClient(BenchConfig config, Path tokenizer) {
        this.config = config;
        this.counter = tokenizer == null ? PromptRenderer.cl100k() : HuggingFaceTokenCounter.open(tokenizer);
        // One lane (event loop and connections) per core: reading streamed tokens is the client's main work, and one
        // loop would hold it to one core.
        int lanes = Math.max(1, Runtime.getRuntime().availableProcessors());
        this.vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(lanes).setPreferNativeTransport(true));
        List<Context> loops = new ArrayList<>();
        List<LaneConnections> connections = new ArrayList<>();
        HttpConnectOptions target = connectOptions(config.baseUrl());
        this.clock = ClientClock.system(vertx);
        VertxInternal internal = (VertxInternal) vertx;
        for (EventExecutor loop : internal.nettyEventLoopGroup()) {
            // Each lane's context is bound to its own loop by name: taking "the next" loop would not do, as creating an
            // HTTP client takes one too, and the lanes ended up sharing a single loop.
            loops.add(internal.contextBuilder().withThreadingModel(ThreadingModel.EVENT_LOOP)
                    .withEventLoop((EventLoop) loop).build());
            HttpClientAgent client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setTcpNoDelay(true)
                    .setDecompressionSupported(false));
            clients.add(client);
            connections.add(new LaneConnections(client, target, (config.maxConnections() + lanes - 1) / lanes));
        }
        RequestOptions options = withHeaders(new RequestOptions().setMethod(HttpMethod.POST)
                .setAbsoluteURI(config.baseUrl() + config.endpoint())
                .putHeader("content-type", "application/json")
                .putHeader("accept", "text/event-stream"));
        this.load = new LoadRun(clock, loops, connections, options, PromptRenderer.cl100k(), counter, config);
        internal.nettyEventLoopGroup().forEach(eventLoops::add);
        this.loopCpu = LoopCpu.of(eventLoops);
    }

    /** {@code options} with the API key's authorization and then the user's {@code --header}s, which replace any. */
    private RequestOptions withHeaders(RequestOptions options) {
        if (config.apiKey() != null && !config.apiKey().isBlank()) {
            options.putHeader("authorization", "Bearer " + config.apiKey());
        }
        config.headers().forEach((name, value) -> options.removeHeader(name).putHeader(name, value));
        return options;
    }

    /** Where the lanes connect: the base URL's host and port, TLS for https. */
    private static HttpConnectOptions connectOptions(String baseUrl) {
        URI uri = URI.create(baseUrl);
        boolean tls = "https".equalsIgnoreCase(uri.getScheme());
        int port = uri.getPort() >= 0 ? uri.getPort() : tls ? 443 : 80;
        return new HttpConnectOptions().setHost(uri.getHost()).setPort(port).setSsl(tls);
    }

    /** Ends the running phase early (SIGINT): no more sends; in-flight requests are aborted and counted as cancelled. */
    public void stop() {
        load.stop();
    }

    /** Sends the workload and measures it, keeping no per-request detail; see the overload. */
    public BenchResult run(Workload workload, long numWarmups, long warmupDurationNanos, long durationNanos,
                           ObjectNode metadata) {
        return run(workload, numWarmups, warmupDurationNanos, durationNanos, metadata, null);
    }

    /** Sends the workload and measures it; see {@link #run(Workload, RunPlan)}. */
    public BenchResult run(Workload workload, long numWarmups, long warmupDurationNanos, long durationNanos,
                           ObjectNode metadata, Path detailFile) {
        return run(workload, RunPlan.of(numWarmups, warmupDurationNanos, durationNanos, metadata, detailFile));
    }

    /**
     * Sends the workload, or the plan's shard of it, and measures it. As {@code infersim simulate} does, the first
     * {@code numWarmups} requests and those scheduled in the first {@code warmupDurationNanos} are warmup: sent, not
     * measured. A shard keeps the requests' indices and times, so shards started at the same instant send together
     * exactly what one unsharded run sends; a closed loop's users are dealt out to the shards.
     */
    public BenchResult run(Workload workload, RunPlan plan) {
        String date = LocalDateTime.now().format(VLLM_DATE);
        Shard shard = plan.sent();
        int users = shardUsers(workload, shard);
        if (results == null) {
            results = new BenchResultAssembly(config, counter, SchedulingNoise.calibrate(CALIBRATION_NANOS));
        }
        String probeError = probe(workload);
        if (probeError != null) {
            LoadRun.Phase nothing = new LoadRun.Phase(emptyWindow(), emptyWindow(), 0, 0, false);
            return results.assemble(date, workload, plan, nothing, new LatencyStats(), ClientGc.start().since(), new long[] {-1, -1}, null, probeError);
        }
        warmUp(workload, users);
        long startNanos = plan.startAtEpochMillis() > 0 ? startNanos(plan.startAtEpochMillis()) : LoadRun.NOW;
        MetricsScraper scraper = config.scrapeUrl() == null ? null
                : new MetricsScraper(vertx, config.scrapeUrl(), config.scrapeIntervalMillis(), clock.nanoTime());
        if (scraper != null) {
            scraper.start();
        }
        LoadRun.Phase phase;
        SchedulingNoise probe = SchedulingNoise.start();
        ClientGc gc = ClientGc.start();
        long[] loopsAtStart = loopCpu.sample();
        LatencyStats noise;
        RequestLogWriter log = plan.detailFile() == null ? null : new RequestLogWriter(plan.detailFile(), true);
        try {
            phase = load.run(shard.requests(workload), workload.isClosedLoop(), users, plan.numWarmups(),
                    plan.warmupDurationNanos(), plan.durationNanos(), config.slo(), log, startNanos);
        } finally {
            noise = probe.stop();
            if (log != null) {
                log.close();
            }
        }
        MetricsScraper.Timeline scraped = scraper == null ? null : scraper.stop();
        long[] loops = LoopCpu.between(loopsAtStart, loopCpu.sample());
        BenchResult result = results.assemble(date, workload, plan, phase, noise, gc.since(), loops, scraped, null);
        if (log != null && log.failure() != null) {
            // the run is measured all the same; the command reports the file it could not write once it has printed it
            result = result.withDetailedFile(null).withOutputError(log.failure());
        }
        return result;
    }

    private MeasuredWindow emptyWindow() {
        long now = clock.nanoTime();
        return new MeasuredWindow(now, now, config.slo(), null, !config.chat());
    }

    /** This shard's part of the concurrency cap: the users of a closed loop are dealt out to the shards. */
    private static int shardUsers(Workload workload, Shard shard) {
        int cap = workload.load().maxConcurrency();
        if (cap == 0 || shard.isWhole()) {
            return cap;
        }
        ConfigException.check(cap >= shard.count(), "--max-concurrency %d is fewer than the %d shards: each needs a user",
                cap, shard.count());
        return cap / shard.count() + (shard.index() < cap % shard.count() ? 1 : 0);
    }

    /** The wall-clock instant {@code --start-at} on the client's clock; it must still be ahead once set up. */
    private long startNanos(long epochMillis) {
        long aheadMillis = epochMillis - System.currentTimeMillis();
        ConfigException.check(aheadMillis > 0, "--start-at %d is %d ms in the past: give an instant after every shard "
                + "has started (its initial test request included)", epochMillis, -aheadMillis);
        return clock.nanoTime() + aheadMillis * 1_000_000L;
    }

    /**
     * Sends one request alone before the run, as vLLM's initial test run does: proves the endpoint answers, and loads
     * the client's code paths so the first scheduled sends are not late. It has the first request's shape but token
     * ids of its own and no shared prefix: sending the first request itself would put its prompt into the server's
     * prefix cache, and request 0 would then hit a cache that no simulation of the workload has.
     *
     * @return why the request failed, or null when it succeeded
     */
    private String probe(Workload workload) {
        WorkloadRequest first = workload.iterator().next();
        WorkloadRequest probe = new WorkloadRequest(0, 0, first.promptTokens(), 0, -1, first.maxTokens(),
                first.outputTokens(), ~first.contentSeed(), 0, false, first.requestClass(), null);
        long deadline = clock.nanoTime() + config.readyCheckTimeoutMillis() * 1_000_000L;
        int attempts = 0;
        while (true) {
            attempts++;
            LoadRun.Phase phase = load.run(List.of(probe).iterator(), false, 0, 1, 0, 0, GoodputSlo.NONE, null,
                    LoadRun.NOW);
            ErrorTally errors = phase.warmup().errors();
            if (errors.total() == 0) {
                return null;
            }
            String type = errors.counts().keySet().iterator().next();
            long remaining = deadline - clock.nanoTime();
            if (!NOT_READY.contains(type) || remaining <= 0) {
                String error = errors.describe().get(0);
                return "the initial test request to " + config.baseUrl() + config.endpoint() + " failed: " + error
                        + (error.startsWith("http_404") ? servedModels() : "")
                        + (attempts > 1 ? " (still not ready after " + attempts + " attempts in "
                        + config.readyCheckTimeoutMillis() / 1000.0 + " s, --ready-check-timeout-sec)" : "");
            }
            try {
                Thread.sleep(Math.max(1, Math.min(READY_RETRY_MILLIS, remaining / 1_000_000L)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "the initial test request to " + config.baseUrl() + config.endpoint() + " was interrupted while "
                        + "waiting for the server to become ready";
            }
        }
    }

    /**
     * Before the first run only: {@link BenchConfig#clientWarmups()} short requests, none measured,
     * with token ids of their own. The client's send and read paths run interpreted until the JIT has seen each
     * method a few hundred times; at 200 requests/s on two cores that took the first second of a run, whose TTFT
     * error p99 was twice the rest's (bench/benchmark-client). They go as many at a time as the run will have in
     * flight ({@code users}, at least 8), so that the run finds its connections open: 32 connections opened at its
     * start put 8-25 ms of the client's own work into the first 40 TTFTs of a 40-stream run (wire-capture.sh); and
     * they go the run's own way (an open loop's pacer and timers, or a closed loop's users), whose first use sent the
     * run's first request 17-22 ms late.
     * A failure here is not the run's: the initial test request already proved the endpoint.
     */
    private void warmUp(Workload workload, int users) {
        int n = config.clientWarmups();
        if (warmedUp || n == 0) {
            return;
        }
        warmedUp = true;
        WorkloadRequest first = workload.iterator().next();
        List<WorkloadRequest> requests = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            requests.add(new WorkloadRequest(i, 0, Math.min(first.promptTokens(), WARMUP_PROMPT_TOKENS), 0, -1,
                    Math.min(first.maxTokens(), WARMUP_OUTPUT_TOKENS), Math.min(first.outputTokens(), WARMUP_OUTPUT_TOKENS),
                    SplitMix64.mix64(~first.contentSeed() + 1 + i), 0, false, first.requestClass(), null));
        }
        load.run(requests.iterator(), workload.isClosedLoop(), Math.min(n, Math.max(users, WARMUP_USERS)), n, 0, 0,
                GoodputSlo.NONE, null, LoadRun.NOW);
    }

    /**
     * Asks the server to forget its prefix cache ({@code POST /reset_prefix_cache}, which infersim serve and vLLM
     * mount with {@code VLLM_SERVER_DEV_MODE=1}), so that the next run's TTFT is not shortened by prompts an earlier run sent.
     *
     * @return why it failed (no such route, an error status, no answer), or null when the server reset its cache
     */
    public String resetPrefixCache() {
        RequestOptions reset = withHeaders(new RequestOptions().setMethod(HttpMethod.POST)
                .setAbsoluteURI(config.baseUrl() + "/reset_prefix_cache").setTimeout(10_000));
        try {
            return clients.get(0).request(reset).compose(req -> req.send().compose(resp -> resp.body().map(body ->
                    resp.statusCode() == 200 ? null : "POST " + config.baseUrl() + "/reset_prefix_cache answered "
                            + resp.statusCode() + (body.length() == 0 ? "" : ": " + body.toString().strip())
                            + (resp.statusCode() == 404 ? " (vLLM and infersim serve mount it only with "
                            + "VLLM_SERVER_DEV_MODE=1 in the server's environment)" : ""))))
                    .await();
        } catch (RuntimeException e) {
            return "POST " + config.baseUrl() + "/reset_prefix_cache failed: " + e.getMessage();
        }
    }

    /**
     * The model names the server lists at {@code /v1/models}, as "; the server serves: a, b", so that a wrong
     * {@code --model} shows the right one; "" when it lists none.
     */
    private String servedModels() {
        try {
            RequestOptions models = withHeaders(new RequestOptions().setMethod(HttpMethod.GET)
                    .setAbsoluteURI(config.baseUrl() + "/v1/models").setTimeout(5_000));
            Buffer body = clients.get(0).request(models)
                    .compose(req -> req.send().compose(HttpClientResponse::body)).await();
            List<String> names = new ArrayList<>();
            new com.fasterxml.jackson.databind.ObjectMapper().readTree(body.getBytes()).path("data")
                    .forEach(m -> names.add(m.path("id").asText()));
            return names.isEmpty() ? "" : "; the server serves: " + TerminalText.printable(String.join(", ", names)) + " (--model)";
        } catch (Exception unavailable) {
            return ""; // not every server lists its models; the 404's own message stands
        }
    }

    @Override
    public void close() {
        for (HttpClientAgent client : clients) {
            client.close().await();
        }
        vertx.close().await();
        if (counter instanceof HuggingFaceTokenCounter hf) {
            hf.close();
        }
    }
}
