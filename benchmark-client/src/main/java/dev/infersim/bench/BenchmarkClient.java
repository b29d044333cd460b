package dev.infersim.bench;

import dev.infersim.engine.ConfigException;
import dev.infersim.result.BenchmarkReport;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.LatencyStats;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.result.RunInfo;
import dev.infersim.workload.Workload;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Context;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
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
    private static final DateTimeFormatter VLLM_DATE = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");
    private static final double[] CURVE_PERCENTILES =
            {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97.5, 99, 99.5, 99.9, 99.99, 100};

    private final BenchConfig config;
    private final Vertx vertx;
    private final List<HttpClientAgent> clients = new ArrayList<>();
    private final LoadRun load;

    /** Connects nothing yet; builds the tokenizer vocabulary (about a second). */
    public BenchmarkClient(BenchConfig config) {
        this.config = config;
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
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST)
                .setAbsoluteURI(config.baseUrl() + config.endpoint())
                .putHeader("content-type", "application/json")
                .putHeader("accept", "text/event-stream");
        if (config.apiKey() != null && !config.apiKey().isBlank()) {
            options.putHeader("authorization", "Bearer " + config.apiKey());
        }
        this.load = new LoadRun(vertx, loops, connections, options, PromptRenderer.cl100k(), config);
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

    /**
     * Sends the workload and measures it. As {@code infersim simulate} does, the first {@code numWarmups} requests
     * and those scheduled in the first {@code warmupDurationNanos} are warmup: sent, not measured.
     *
     * @param workload            the request stream (the same one {@code simulate} replays for the same spec)
     * @param numWarmups          leading requests excluded from the measured window ({@code --num-warmups})
     * @param warmupDurationNanos requests scheduled before this are excluded ({@code --warmup-duration})
     * @param durationNanos       stop issuing measured requests after this long ({@code --duration}); 0 for no limit
     * @param metadata            extra top-level keys ({@code --metadata k=v}, the infersim version, workload
     *                            description), written into the result unless a measured key has the name
     * @param detailFile          per-request JSONL of the measured requests ({@code --save-detailed}), or null; a
     *                            per-run argument so that each point of a sweep keeps its own file
     */
    public BenchResult run(Workload workload, long numWarmups, long warmupDurationNanos, long durationNanos,
                           Map<String, Object> metadata, Path detailFile) {
        String date = LocalDateTime.now().format(VLLM_DATE);
        probe(workload);
        MetricsScraper scraper = config.scrapeUrl() == null ? null
                : new MetricsScraper(vertx, config.scrapeUrl(), config.scrapeIntervalMillis(), System.nanoTime());
        if (scraper != null) {
            scraper.start();
        }
        LoadRun.Phase phase;
        try (RequestLogWriter log = detailFile == null ? null : new RequestLogWriter(detailFile, true)) {
            phase = load.run(workload.iterator(), workload.isClosedLoop(), workload.load().maxConcurrency(),
                    numWarmups, warmupDurationNanos, durationNanos, config.slo(), log);
        }
        Map<String, Object> scraped = scraper == null ? null : scraper.stop();
        return result(date, workload, numWarmups, phase, scraped, metadata, detailFile);
    }

    /**
     * Sends the workload's first request alone before the run, as vLLM's initial test run does: proves the endpoint
     * answers, and loads the client's code paths so the first scheduled sends are not late.
     */
    private void probe(Workload workload) {
        LoadRun.Phase phase = load.run(List.of(workload.iterator().next()).iterator(), false, 0, 1, 0, 0,
                GoodputSlo.NONE, null);
        ErrorTally errors = phase.warmup().errors;
        if (errors.total() > 0) {
            throw new ConfigException("the initial test request to " + config.baseUrl() + config.endpoint()
                    + " failed: " + errors.describe().get(0));
        }
    }

    private BenchResult result(String date, Workload measured, long numWarmups, LoadRun.Phase phase,
                               Map<String, Object> scraped, Map<String, Object> metadata, Path detailFile) {
        MeasuredWindow w = phase.window();
        // num_prompts is what was asked for, as vLLM writes it, even when --duration or an interrupt cut the run short.
        long asked = measured.size() - Math.min(numWarmups, measured.size());
        RunInfo info = new RunInfo(date, backend(), config.model(), "cl100k_base", asked, measured.load().requestRatePerS(), measured.load().burstiness(),
                measured.load().maxConcurrency(), config.percentileMetrics(), config.metricPercentiles(),
                measured.load().rampUp());
        List<String> invalid = new ArrayList<>();
        double lagP99Ms = w.sendLag.percentileMs(99);
        if (w.sendLag.count() > 0 && lagP99Ms * 1e6 > config.maxSendLagNanos()) {
            invalid.add(String.format(java.util.Locale.ROOT,
                    "p99 send lag %.3f ms exceeds --max-send-lag-ms %.3f: the client could not keep the schedule",
                    lagP99Ms, config.maxSendLagNanos() / 1e6));
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
        extra.put("infersim_max_send_lag_ms", config.maxSendLagNanos() / 1e6);
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
        extra.put("infersim_ground_truth", groundTruth(w));
        MeasuredWindow warm = phase.warmup();
        extra.put("infersim_warmup", Map.of("requests", warm.finished(), "failed", warm.stats.failed(),
                "cancelled", warm.cancelled, "duration_s", warm.finished() == 0 ? 0.0 : warm.durationNanos() / 1e9));
        extra.put("infersim_interrupted", phase.interrupted());
        extra.put("infersim_detailed_file", detailFile == null ? null : detailFile.toString());
        extra.put("infersim_percentile_curves", curves(w));
        extra.put("infersim_timeseries", w.timeSeries());
        extra.put("infersim_server_metrics", scraped);
        extra.put("infersim_machine", machine());
        BenchmarkReport report = BenchmarkReport.of(info, w.stats, w.durationNanos(), extra);
        // As in vLLM, the measured keys win: --metadata completed=999 must not rewrite what was measured.
        metadata.forEach(report.fields()::putIfAbsent);
        return new BenchResult(report, w.errors, invalid);
    }

    private String backend() {
        return config.chat() ? "openai-chat" : "openai";
    }

    private static Map<String, Object> lagSummary(LatencyStats s) {
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
        return m;
    }

    private Map<String, Object> curves(MeasuredWindow w) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("percentiles", CURVE_PERCENTILES);
        for (String metric : List.of("ttft", "tpot", "itl", "e2el")) {
            m.put(metric + "_ms", curve(w.stats.metric(metric)));
        }
        m.put("icl_ms", curve(w.stats.icl()));
        m.put("send_lag_ms", curve(w.sendLag));
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
    }
}
