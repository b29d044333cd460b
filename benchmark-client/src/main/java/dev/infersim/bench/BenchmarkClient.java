package dev.infersim.bench;

import dev.infersim.common.ConfigException;
import dev.infersim.common.SplitMix64;
import dev.infersim.result.BenchmarkReport;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.LatencyStats;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.result.LatencyLog;
import dev.infersim.result.RunInfo;
import dev.infersim.result.ServingSummary;
import dev.infersim.workload.Shard;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Context;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnectOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.internal.VertxInternal;

import java.net.URI;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
    /** The send lag's name in a shard's latency log and moments. */
    static final String SEND_LAG = "send_lag";
    private static final long CALIBRATION_NANOS = 300_000_000;
    /** A client warm-up request's prompt and output at most: the code paths matter, not the lengths. */
    private static final int WARMUP_PROMPT_TOKENS = 64;
    private static final int WARMUP_OUTPUT_TOKENS = 8;
    private static final int WARMUP_USERS = 8;
    /** Above this share of unshared prompt tokens served from cache, the prompts were evidently sent before. */
    private static final double UNEXPECTED_CACHE_HIT_RATE = 0.5;
    private static final DateTimeFormatter VLLM_DATE = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");
    private static final double[] CURVE_PERCENTILES =
            {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97.5, 99, 99.5, 99.9, 99.99, 100};

    private final BenchConfig config;
    private final Vertx vertx;
    private final List<HttpClientAgent> clients = new ArrayList<>();
    private final LoadRun load;
    private final TokenCounter counter;
    private final LoopCpu loopCpu;
    private final List<EventExecutor> eventLoops = new ArrayList<>();
    /** Wake-up lateness of an idle probe thread, measured once before the first run. */
    private LatencyStats calibration;
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
        this.load = new LoadRun(vertx, loops, connections, options, PromptRenderer.cl100k(), counter, config);
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
                           Map<String, Object> metadata) {
        return run(workload, numWarmups, warmupDurationNanos, durationNanos, metadata, null);
    }

    /** Sends the workload and measures it; see {@link #run(Workload, RunPlan)}. */
    public BenchResult run(Workload workload, long numWarmups, long warmupDurationNanos, long durationNanos,
                           Map<String, Object> metadata, Path detailFile) {
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
        if (calibration == null) {
            calibration = SchedulingNoise.calibrate(CALIBRATION_NANOS);
        }
        String probeError = probe(workload);
        if (probeError != null) {
            LoadRun.Phase nothing = new LoadRun.Phase(emptyWindow(), emptyWindow(), 0, 0, false);
            return result(date, workload, plan, nothing, new LatencyStats(), new LatencyStats(),
                    ClientGc.start().since(), new long[] {-1, -1}, null, probeError);
        }
        warmUp(workload);
        long startNanos = plan.startAtEpochMillis() > 0 ? startNanos(plan.startAtEpochMillis()) : LoadRun.NOW;
        MetricsScraper scraper = config.scrapeUrl() == null ? null
                : new MetricsScraper(vertx, config.scrapeUrl(), config.scrapeIntervalMillis(), System.nanoTime());
        if (scraper != null) {
            scraper.start();
        }
        LoadRun.Phase phase;
        SchedulingNoise probe = SchedulingNoise.start();
        LoopLateness reads = LoopLateness.start(eventLoops);
        ClientGc gc = ClientGc.start();
        long[] loopsAtStart = loopCpu.sample();
        LatencyStats noise;
        LatencyStats readDelay;
        RequestLogWriter log = plan.detailFile() == null ? null : new RequestLogWriter(plan.detailFile(), true);
        try {
            phase = load.run(shard.requests(workload), workload.isClosedLoop(), users, plan.numWarmups(),
                    plan.warmupDurationNanos(), plan.durationNanos(), config.slo(), log, startNanos);
        } finally {
            noise = probe.stop();
            readDelay = reads.stop();
            if (log != null) {
                log.close();
            }
        }
        Map<String, Object> scraped = scraper == null ? null : scraper.stop();
        long[] loops = LoopCpu.between(loopsAtStart, loopCpu.sample());
        BenchResult result = result(date, workload, plan, phase, noise, readDelay, gc.since(), loops, scraped, null);
        if (log != null && log.failure() != null) {
            // the run is measured all the same; the command reports the file it could not write once it has printed it
            result.fields().put("infersim_detailed_file", null);
            outputErrors(result).add(log.failure());
        }
        return result;
    }

    /**
     * The files this run could not write (the per-request rows, the histogram log), one line each naming the file and
     * why: {@code infersim_output_errors}, which the command turns into its exit code.
     */
    @SuppressWarnings("unchecked")
    public static List<String> outputErrors(BenchResult result) {
        return (List<String>) result.fields().computeIfAbsent("infersim_output_errors", k -> new ArrayList<String>());
    }

    private MeasuredWindow emptyWindow() {
        long now = System.nanoTime();
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

    /** The wall-clock instant {@code --start-at} on the monotonic clock; it must still be ahead once set up. */
    private static long startNanos(long epochMillis) {
        long aheadMillis = epochMillis - System.currentTimeMillis();
        ConfigException.check(aheadMillis > 0, "--start-at %d is %d ms in the past: give an instant after every shard "
                + "has started (its initial test request included)", epochMillis, -aheadMillis);
        return System.nanoTime() + aheadMillis * 1_000_000L;
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
        LoadRun.Phase phase = load.run(List.of(probe).iterator(), false, 0, 1, 0, 0, GoodputSlo.NONE, null,
                LoadRun.NOW);
        ErrorTally errors = phase.warmup().errors;
        if (errors.total() == 0) {
            return null;
        }
        String error = errors.describe().get(0);
        return "the initial test request to " + config.baseUrl() + config.endpoint() + " failed: " + error
                + (error.startsWith("http_404") ? servedModels() : "");
    }

    /**
     * Before the first run only: {@link BenchConfig#clientWarmups()} short requests in a closed loop, none measured,
     * with token ids of their own. The client's send and read paths run interpreted until the JIT has seen each
     * method a few hundred times; at 200 requests/s on two cores that took the first second of a run, whose TTFT
     * error p99 was twice the rest's (bench/benchmark-client). A failure here is not the run's: the initial test
     * request already proved the endpoint.
     */
    private void warmUp(Workload workload) {
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
        load.run(requests.iterator(), true, Math.min(n, WARMUP_USERS), n, 0, 0, GoodputSlo.NONE, null, LoadRun.NOW);
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

    /**
     * @param noise      wake-up lateness of the noise probe during the run
     * @param readDelay  how late the event loops ran what was due during the run ({@link LoopLateness})
     * @param gc         the client JVM's own garbage collections during the run ({@link ClientGc#since})
     * @param loops      the event loops' time on a CPU and waiting for one during the run ({@link LoopCpu})
     * @param probeError why the initial test request failed (nothing else was sent), or null
     */
    private BenchResult result(String date, Workload measured, RunPlan plan, LoadRun.Phase phase, LatencyStats noise,
                               LatencyStats readDelay, Map<String, Object> gc, long[] loops,
                               Map<String, Object> scraped, String probeError) {
        MeasuredWindow w = phase.window();
        // num_prompts is what was asked for, as vLLM writes it, even when --duration or an interrupt cut the run short;
        // a shard's is its own share.
        Shard shard = plan.sent();
        long size = measured.size();
        long asked = shard.size(size, measured.isClosedLoop())
                - shard.size(Math.min(plan.numWarmups(), size), measured.isClosedLoop());
        RunInfo info = new RunInfo(date, backend(), config.model(), counter.name(), asked, measured.load().requestRatePerS(), measured.load().burstiness(),
                measured.load().maxConcurrency(), config.percentileMetrics(), config.metricPercentiles(),
                measured.load().rampUp());
        List<String> invalid = new ArrayList<>();
        if (probeError != null) {
            invalid.add(probeError + "; nothing else was sent");
        }
        String failures = failureReason(w);
        if (failures != null) {
            invalid.add(failures);
        }
        String unjudged = arrivalsNotJudged(measured, plan, w);
        ArrivalFit arrivals = unjudged == null ? w.arrivals(measured.load().requestRatePerS(),
                measured.load().burstiness()) : null;
        if (arrivals != null && arrivals.off()) {
            invalid.add("the requests did not go out as the requested arrival process: " + arrivals.describe());
        }
        TimingError timing = w.stats.completed() == 0 ? null : TimingError.judge(
                hasSchedule(measured) && w.sendLag.count() > 0 ? nanos(w.sendLag.percentileMs(99)) : -1,
                readDelay.count() == 0 ? -1 : nanos(readDelay.percentileMs(99)), nanos(w.stats.ttft().medianMs()),
                w.stats.itl().count() == 0 ? -1 : nanos(w.stats.itl().meanMs()));
        if (timing != null && timing.material() && !config.strictTiming()) {
            invalid.add(timing.describe());
        }
        boolean fitted = config.maxSendLagNanos() == BenchConfig.FIT_TO_MACHINE;
        long limit = fitted ? SendLagVerdict.limitFromCalibration(nanos(calibration.percentileMs(99)))
                : config.maxSendLagNanos();
        SendLagVerdict lag = !config.strictTiming() ? null : SendLagVerdict.judge(hasSchedule(measured),
                nanos(w.sendLag.percentileMs(99)), nanos(w.startLag.percentileMs(99)),
                w.spacedSendLag.count() == 0 ? -1 : nanos(w.spacedSendLag.percentileMs(99)),
                noise.count() == 0 ? -1 : nanos(noise.percentileMs(99)), loops[0], loops[1], limit,
                fitted ? "the machine-fitted limit" : "--max-send-lag-ms");
        if (lag != null && lag.invalid() && w.sendLag.count() > 0) {
            invalid.add(lag.message());
        }
        if (phase.interrupted()) {
            invalid.add("the run was interrupted: " + w.sent() + " of " + asked + " requests sent, " + w.cancelled
                    + " of them cut off in flight (cancelled)");
        }
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("infersim_backend", backend());
        extra.put("infersim_base_url", config.baseUrl());
        extra.put("infersim_endpoint", config.endpoint());
        extra.put("infersim_load_mode", measured.isClosedLoop() ? "closed_loop" : "open_loop");
        extra.put("infersim_valid", invalid.isEmpty());
        extra.put("infersim_invalid_reasons", invalid);
        extra.put("infersim_send_lag_ms", lagSummary(w.sendLag));
        extra.put("infersim_read_delay_ms", lagSummary(readDelay));
        extra.put("infersim_validity", ordered("arrivals", arrivals == null ? ordered("judged", false, "reason", unjudged)
                : arrivalsJson(arrivals), "timing", timing == null ? null : timingJson(timing),
                "strict_timing", config.strictTiming()));
        extra.put("infersim_max_send_lag_ms", lag == null ? null : limit / 1e6);
        extra.put("infersim_send_lag_verdict", lag == null ? null : ordered("cause",
                lag.cause().name().toLowerCase(java.util.Locale.ROOT), "message", lag.message(),
                "limit_source", fitted ? "calibration" : "flag"));
        extra.put("infersim_scheduling_noise_ms", ordered("calibration", lagSummary(calibration),
                "during_run", lagSummary(noise)));
        extra.put("infersim_client_gc", gc);
        extra.put("infersim_client_loops_ms", loops[0] < 0 ? null
                : ordered("on_cpu", loops[0] / 1e6, "waiting_for_cpu", loops[1] / 1e6));
        extra.put("infersim_max_in_flight", phase.maxInFlight());
        extra.put("infersim_mean_in_flight", phase.meanInFlight());
        double steady = measured.isClosedLoop() ? w.closedLoopThroughput(phase.meanInFlight())
                : w.stats.steadyRequestThroughput();
        extra.put("infersim_steady_request_throughput", Double.isNaN(steady) ? null : steady);
        double steadyOutput = steady * w.stats.meanOutputTokens();
        extra.put("infersim_steady_output_throughput", Double.isNaN(steadyOutput) ? null : steadyOutput);
        double offered = w.stats.steadySendRate();
        extra.put("infersim_steady_send_rate", Double.isNaN(offered) ? null : offered);
        // completed + failed + cancelled = sent: an interrupt leaves no request unaccounted for.
        extra.put("infersim_sent", w.sent());
        extra.put("infersim_cancelled", w.cancelled);
        extra.put("infersim_errors", w.errors.toJson());
        extra.put("infersim_prompt_token_mismatches", w.promptMismatches);
        extra.put("infersim_prompt_token_mismatch_max_tokens", w.promptMismatchMaxTokens);
        extra.put("infersim_prompt_token_mismatch_examples", w.promptMismatchExamples);
        Map<String, Object> truth = groundTruth(w);
        extra.put("infersim_ground_truth", truth);
        extra.put("infersim_findings", StreamFindings.toJson(StreamFindings.of(truth, null)));
        extra.put("infersim_time_scale", w.timeScale);
        extra.put("infersim_model_time_ms", w.timeScale == 1 ? null : modelTime(w));
        TokenCountMethod counted = w.weakestTokenCountMethod();
        extra.put("infersim_token_count_method", counted == null ? null : counted.key());
        extra.put("infersim_warnings", warnings(w));
        MeasuredWindow warm = phase.warmup();
        extra.put("infersim_warmup", Map.of("requests", warm.finished(), "failed", warm.stats.failed(),
                "cancelled", warm.cancelled, "duration_s", warm.finished() == 0 ? 0.0 : warm.durationNanos() / 1e9));
        extra.put("infersim_interrupted", phase.interrupted());
        extra.put("infersim_error", probeError);
        extra.put("infersim_detailed_file", plan.detailFile() == null ? null : plan.detailFile().toString());
        extra.put("infersim_percentile_curves", curves(w.stats, w.sendLag));
        extra.put("infersim_timeseries", w.timeSeries());
        extra.put("infersim_server_metrics", scraped);
        extra.put("infersim_machine", machine());
        List<String> outputErrors = new ArrayList<>();
        if (plan.shard() != null) {
            extra.put("infersim_shard", shardKeys(plan, w, outputErrors));
        }
        if (!outputErrors.isEmpty()) {
            extra.put("infersim_output_errors", outputErrors);
        }
        BenchmarkReport report = BenchmarkReport.of(info, w.stats, w.durationNanos(), extra);
        // As in vLLM, the measured keys win: --metadata completed=999 must not rewrite what was measured.
        plan.metadata().forEach(report.fields()::putIfAbsent);
        return new BenchResult(report, w.errors, invalid);
    }

    /**
     * What {@code infersim merge} needs of a shard beyond vLLM's keys: which shard, its measured window on the wall
     * clock (for the union of the shards' spans), its exact good-request count, and each latency's exact count, mean
     * and deviation, whose histograms go to the plan's HdrHistogram log (kept beside the result as RESULT.hlog).
     */
    private static Map<String, Object> shardKeys(RunPlan plan, MeasuredWindow w, List<String> outputErrors) {
        long scheduleStartEpochMillis = plan.startAtEpochMillis() > 0 ? plan.startAtEpochMillis()
                : System.currentTimeMillis() - (System.nanoTime() - w.scheduleStartNanos) / 1_000_000L;
        Map<String, LatencyStats> latencies = new LinkedHashMap<>();
        for (String name : ServingSummary.LATENCIES) {
            latencies.put(name, w.stats.latency(name));
        }
        latencies.put(SEND_LAG, w.sendLag);
        Map<String, Object> moments = new LinkedHashMap<>();
        latencies.forEach((name, s) -> moments.put(name, Map.of("count", s.count(), "mean_ms", s.meanMs(),
                "std_ms", s.stdMs())));
        double windowStartS = (w.startNanos - w.scheduleStartNanos) / 1e9;
        double windowEndS = windowStartS + w.durationNanos() / 1e9;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("index", plan.shard().index());
        m.put("count", plan.shard().count());
        m.put("schedule_start_epoch_ms", scheduleStartEpochMillis);
        m.put("window_start_s", windowStartS);
        m.put("window_end_s", windowEndS);
        m.put("good_requests", w.stats.goodRequests());
        if (plan.latencyLog() != null) {
            try {
                LatencyLog.write(plan.latencyLog(), scheduleStartEpochMillis + (long) (windowStartS * 1e3),
                        scheduleStartEpochMillis + (long) Math.ceil(windowEndS * 1e3), latencies);
            } catch (ConfigException e) {
                outputErrors.add(e.getMessage());
            }
        }
        m.put("latency_moments", moments);
        return m;
    }

    /**
     * The latencies in the server's model time when it runs faster than the modelled GPU: the wall-clock figures times
     * the time scale (TPOT 0.7 ms at 10x is 7 ms on the modelled GPU).
     */
    private static Map<String, Object> modelTime(MeasuredWindow w) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String metric : List.of("ttft", "tpot", "itl", "e2el")) {
            LatencyStats s = w.stats.metric(metric);
            m.put(metric, ordered("mean", s.meanMs() * w.timeScale, "median", s.medianMs() * w.timeScale,
                    "p99", s.percentileMs(99) * w.timeScale));
        }
        return m;
    }

    /** What the user should know about the run that does not make it invalid. */
    private List<String> warnings(MeasuredWindow w) {
        List<String> warnings = new ArrayList<>();
        if (w.weakestTokenCountMethod() == TokenCountMethod.TOKENIZER) {
            warnings.add("the server sent no usage, so each chunk's token count comes from the " + counter.name()
                    + " tokenizer alone" + (counter instanceof PromptRenderer ? ", not the model's own (--tokenizer "
                    + "takes its tokenizer.json)" : "") + ": per-token ITL and TPOT are as exact as the tokenizer");
        }
        double hits = w.unexpectedCacheHitRate();
        if (hits > UNEXPECTED_CACHE_HIT_RATE) {
            warnings.add(String.format(java.util.Locale.ROOT, "the server served %.0f%% of the prompt tokens the "
                    + "workload does not share from its prefix cache: these prompts were sent to it before (the same "
                    + "--seed), so TTFT is lower than for new prompts; pass another --seed or restart the server",
                    100 * hits));
        }
        return warnings;
    }

    /** Why the share of failed requests makes the run invalid, or null when it is within --max-failure-rate. */
    private String failureReason(MeasuredWindow w) {
        long failed = w.stats.failed();
        long ended = w.stats.completed() + failed;
        if (failed == 0 || failed <= config.maxFailureRate() * ended) {
            return null;
        }
        return String.format(java.util.Locale.ROOT, "%d of %d requests failed (%.1f%%), over --max-failure-rate %s; "
                + "first: %s", failed, ended, 100.0 * failed / ended, config.maxFailureRate(), w.errors.describe().get(0));
    }

    /**
     * Why the sends cannot be tested against a stationary arrival process, or null when they can: only a finite
     * --request-rate without ramp, trace or rate schedule asks for one, a shard sends a thinned part of it, and a
     * concurrency cap that held requests back moved their sends on purpose.
     */
    private static String arrivalsNotJudged(Workload w, RunPlan plan, MeasuredWindow window) {
        if (w.isClosedLoop() || Double.isInfinite(w.load().requestRatePerS())) {
            return "no request rate: everything at once or a closed loop";
        }
        if (w.load().rampUp() != null || w.load().schedule() != null || w.dataset().recordedArrivals() != null) {
            return "the rate changes over the run (a ramp, a rate schedule or a trace)";
        }
        if (plan.shard() != null && !plan.shard().isWhole()) {
            return "a shard sends every N-th request of the schedule";
        }
        if (window.clientQueued > 0) {
            return window.clientQueued + " requests waited for a --max-concurrency slot, which delays sends on purpose";
        }
        return null;
    }

    private static Map<String, Object> arrivalsJson(ArrivalFit a) {
        return ordered("judged", true, "sends", a.sends(), "requested_rate_per_s", a.requestedRate(),
                "achieved_rate_per_s", finite(a.achievedRate()), "rate_tolerance", a.tolerance(),
                "gap_cv", finite(a.gapCv()), "ks_d", finite(a.ksD()), "ks_p_value", finite(a.ksP()),
                "significance", ArrivalFit.ALPHA, "rate_off", a.rateOff(), "gaps_off", a.gapsOff(),
                "message", a.describe());
    }

    private static Map<String, Object> timingJson(TimingError t) {
        return ordered("send_lag_p99_ms", t.sendLagP99Nanos() < 0 ? null : t.sendLagP99Nanos() / 1e6,
                "read_delay_p99_ms", t.readDelayP99Nanos() < 0 ? null : t.readDelayP99Nanos() / 1e6,
                "ttft_error_p99_ms", t.ttftErrorNanos() / 1e6, "ttft_p50_ms", t.ttftP50Nanos() / 1e6,
                "mean_itl_ms", t.meanItlNanos() < 0 ? null : t.meanItlNanos() / 1e6,
                "material_share", TimingError.MATERIAL_SHARE, "material", t.material(), "message", t.describe());
    }

    private static Double finite(double x) {
        return Double.isFinite(x) ? x : null;
    }

    /** Whether requests had intended send times: not so for a closed loop or everything at once (rate inf). */
    private static boolean hasSchedule(Workload w) {
        return !w.isClosedLoop() && (Double.isFinite(w.load().requestRatePerS()) || w.load().rampUp() != null
                || w.dataset().recordedArrivals() != null);
    }

    /** A map that keeps its keys in the order given, as the result file should. */
    private static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    private static long nanos(double ms) {
        return Math.round(ms * 1e6);
    }

    private String backend() {
        return config.chat() ? "openai-chat" : "openai";
    }

    static Map<String, Object> lagSummary(LatencyStats s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("samples", s.count());
        m.put("mean", s.meanMs());
        m.put("p50", s.medianMs());
        m.put("p99", s.percentileMs(99));
        m.put("max", s.maxMs());
        return m;
    }

    private static Map<String, Object> groundTruth(MeasuredWindow w) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("requests", w.ttftError.count());
        m.put("ttft_abs_error_ms", lagSummary(w.ttftError));
        m.put("e2el_abs_error_ms", lagSummary(w.e2elError));
        m.put("negative_errors", w.negativeErrors);
        m.put("streams", ordered("checked", w.streamsChecked, "bunched", w.streamsBunched, "chunks", w.truthChunks,
                "tokens", w.truthTokens, "lost_token_requests", w.lostTokenRequests, "lost_tokens", w.lostTokens,
                "reordered_requests", w.reorderedRequests));
        m.put("pre_arrival_ms", lagSummary(w.preArrival));
        m.put("late_arrivals", w.lateArrivals);
        Map<String, Object> spread = new LinkedHashMap<>();
        w.requestsPerReplica.forEach((replica, n) -> spread.put(Integer.toString(replica), n));
        m.put("requests_per_replica", spread);
        Map<String, Object> perReplica = new LinkedHashMap<>();
        w.ttftPerReplica.forEach((replica, ttft) -> {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("requests", w.requestsPerReplica.get(replica));
            r.put("mean_ttft_ms", ttft.meanMs());
            r.put("p99_ttft_ms", ttft.percentileMs(99));
            LatencyStats queue = w.queuePerReplica.get(replica);
            r.put("mean_queue_ms", queue == null ? null : queue.meanMs());
            perReplica.put(Integer.toString(replica), r);
        });
        m.put("per_replica", perReplica);
        return m;
    }

    /** vLLM's four metrics, chunk ICL and send lag at {@link #CURVE_PERCENTILES}, for the report's curves. */
    static Map<String, Object> curves(ServingSummary stats, LatencyStats sendLag) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("percentiles", CURVE_PERCENTILES);
        for (String metric : List.of("ttft", "tpot", "itl", "e2el")) {
            m.put(metric + "_ms", curve(stats.metric(metric)));
        }
        m.put("icl_ms", curve(stats.icl()));
        m.put("send_lag_ms", curve(sendLag));
        return m;
    }

    private static double[] curve(LatencyStats s) {
        double[] values = new double[CURVE_PERCENTILES.length];
        for (int i = 0; i < values.length; i++) {
            values[i] = s.percentileMs(CURVE_PERCENTILES[i]);
        }
        return values;
    }

    private static Map<String, Object> machine() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        m.put("arch", System.getProperty("os.arch"));
        m.put("cpus", Runtime.getRuntime().availableProcessors());
        m.put("max_heap_bytes", Runtime.getRuntime().maxMemory());
        m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        return m;
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
