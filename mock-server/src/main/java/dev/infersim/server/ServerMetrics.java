package dev.infersim.server;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.FinishReason;
import dev.infersim.engine.KvCapacity;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * The server's Prometheus metrics under vLLM V1's names, labels ({@code engine}, {@code model_name}) and histogram
 * buckets ({@code vllm/v1/metrics/loggers.py}), plus infersim's own under {@code infersim:}. Durations are model-time
 * seconds (what the modelled GPU would show; divide by the time scale for wall time). The engine thread records;
 * /metrics renders the text exposition format 0.0.4 by hand, so names keep vLLM's colons and {@code _total} suffixes.
 * One instance per engine; with {@code --data-parallel-size N} the N engines share one /metrics, each series labelled
 * {@code engine="0".."N-1"} under one family header, as vLLM's.
 */
final class ServerMetrics {
    static final double[] TTFT_BUCKETS = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
            2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
    static final double[] ITL_BUCKETS = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
            5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
    private static final double[] REQUEST_LATENCY_BUCKETS = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
            30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
    private static final double[] ITERATION_TOKEN_BUCKETS = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    private static final double[] STEP_BUCKETS = {0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1,
            0.25, 0.5, 1.0, 2.5};
    private static final double[] N_BUCKETS = {1, 2, 5, 10, 20};
    private static final double[] LAG_BUCKETS = {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2,
            5e-2, 0.1, 0.25, 1.0};

    private final String labels;
    private final String cacheConfigLabels;
    private final double timeScale;

    final BucketHistogram ttft = new BucketHistogram(TTFT_BUCKETS);
    final BucketHistogram itl = new BucketHistogram(ITL_BUCKETS);
    final BucketHistogram tpot = new BucketHistogram(ITL_BUCKETS);
    final BucketHistogram e2e = new BucketHistogram(REQUEST_LATENCY_BUCKETS);
    final BucketHistogram queue = new BucketHistogram(REQUEST_LATENCY_BUCKETS);
    final BucketHistogram inference = new BucketHistogram(REQUEST_LATENCY_BUCKETS);
    final BucketHistogram prefill = new BucketHistogram(REQUEST_LATENCY_BUCKETS);
    final BucketHistogram decode = new BucketHistogram(REQUEST_LATENCY_BUCKETS);
    final BucketHistogram iterationTokens = new BucketHistogram(ITERATION_TOKEN_BUCKETS);
    final BucketHistogram paramsN = new BucketHistogram(N_BUCKETS);
    final BucketHistogram promptTokens;
    final BucketHistogram generationTokens;
    final BucketHistogram paramsMaxTokens;
    final BucketHistogram stepLag = new BucketHistogram(LAG_BUCKETS);
    final BucketHistogram stepDuration = new BucketHistogram(STEP_BUCKETS);
    /** Longest step lag the nanosecond histogram tells apart; longer ones count as this. */
    private static final long MAX_TRACKED_LAG_NANOS = TimeUnit.MINUTES.toNanos(10);
    /**
     * Step lag in nanoseconds at 3 significant digits, for benchmarks (any thread may read a copy). Its range is fixed:
     * an auto-resizing one grows on the engine thread at the first long lag, allocating and copying its counts while
     * waiting out readers, and a stack sample caught the engine thread inside such a resize 10 ms into a stall.
     */
    final Histogram stepLagNanos = new ConcurrentHistogram(1, MAX_TRACKED_LAG_NANOS, 3);

    private final AtomicLong successStop = new AtomicLong();
    private final AtomicLong successLength = new AtomicLong();
    private final AtomicLong successAbort = new AtomicLong();
    private final AtomicLong promptTokensTotal = new AtomicLong();

    // engine snapshot, published after each step
    private volatile int running;
    private volatile int waiting;
    private volatile double kvUsage;
    private volatile long preemptions;
    private volatile long generationTokensTotal;
    private volatile long prefixQueries;
    private volatile long prefixHits;
    private volatile long steps;

    ServerMetrics(String servedModelName, Deployment d, KvCapacity kv, double timeScale, int engineIndex) {
        this.labels = "engine=\"" + engineIndex + "\",model_name=\"" + escapeLabel(servedModelName) + "\"";
        this.cacheConfigLabels = String.format(Locale.ROOT, "block_size=\"%d\",cache_dtype=\"%s\",enable_prefix_caching=\"%s\","
                        + "gpu_memory_utilization=\"%s\",num_gpu_blocks=\"%d\",engine=\"%d\"", kv.blockSize(),
                d.kvCacheDtype().toString().toLowerCase(Locale.ROOT), d.enablePrefixCaching() ? "True" : "False",
                d.gpuMemoryUtilization(), kv.numBlocks(), engineIndex);
        this.timeScale = timeScale;
        promptTokens = BucketHistogram.oneTwoFive(kv.maxModelLen());
        generationTokens = BucketHistogram.oneTwoFive(kv.maxModelLen());
        paramsMaxTokens = BucketHistogram.oneTwoFive(kv.maxModelLen());
    }

    /** Engine thread: one step of {@code durationNanos} (model time) finished {@code lagNanos} (wall) after its plan. */
    void recordStep(long tokens, long durationNanos, long lagNanos) {
        iterationTokens.record(tokens);
        stepDuration.record(durationNanos / 1e9);
        stepLag.record(lagNanos / 1e9);
        stepLagNanos.recordValue(Math.min(Math.max(0, lagNanos), MAX_TRACKED_LAG_NANOS));
    }

    /** Engine thread: a request's first token. */
    void recordFirstToken(EngineRequest r, long nowNanos) {
        ttft.record((nowNanos - r.arrivalNanos()) / 1e9);
        promptTokensTotal.lazySet(promptTokensTotal.get() + r.promptTokens());
    }

    /** Engine thread: a later token, {@code gapNanos} after the previous one. */
    void recordInterToken(long gapNanos) {
        itl.record(gapNanos / 1e9);
        tpot.record(gapNanos / 1e9);
    }

    /** Engine thread: a request finished; {@code n} is its HTTP request's choice count (recorded once, by choice 0). */
    void recordFinish(EngineRequest r, int choiceIndex, int n) {
        AtomicLong counter = r.finishReason() == FinishReason.STOP ? successStop
                : r.finishReason() == FinishReason.LENGTH ? successLength : successAbort;
        counter.lazySet(counter.get() + 1);
        if (choiceIndex == 0) {
            paramsN.record(n);
        }
        if (r.finishReason() == FinishReason.ABORT || r.firstTokenNanos() < 0) {
            return;
        }
        e2e.record((r.finishedNanos() - r.arrivalNanos()) / 1e9);
        queue.record((r.firstScheduledNanos() - r.arrivalNanos()) / 1e9);
        inference.record((r.finishedNanos() - r.firstScheduledNanos()) / 1e9);
        prefill.record((r.firstTokenNanos() - r.firstScheduledNanos()) / 1e9);
        decode.record((r.finishedNanos() - r.firstTokenNanos()) / 1e9);
        promptTokens.record(r.promptTokens());
        generationTokens.record(r.outputTokens());
        paramsMaxTokens.record(r.maxTokens());
    }

    /** Engine thread: publishes the engine's gauges and counters. */
    void snapshot(EngineCore engine, int notYetQueued) {
        running = engine.runningCount();
        waiting = engine.waitingCount() + notYetQueued;
        kvUsage = engine.kvCacheUsage();
        preemptions = engine.preemptions();
        generationTokensTotal = engine.outputTokens();
        prefixQueries = engine.kvCache().queriedTokens();
        prefixHits = engine.kvCache().hitTokens();
        steps = engine.steps();
    }

    int running() {
        return running;
    }

    int waiting() {
        return waiting;
    }

    double kvUsage() {
        return kvUsage;
    }

    /** Requests that finished, for any reason: vLLM's request_success_total summed over finished_reason. */
    long finished() {
        return successStop.get() + successLength.get() + successAbort.get();
    }

    double timeScale() {
        return timeScale;
    }

    /** The Prometheus text exposition (format 0.0.4) of one server's engines. */
    static String render(List<ServerMetrics> engines) {
        StringBuilder b = new StringBuilder(16_384 * engines.size());
        gauge(b, engines, "vllm:num_requests_running", "Number of requests in model execution batches.", m -> m.running);
        gauge(b, engines, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", m -> m.waiting);
        gauge(b, engines, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", m -> m.kvUsage);
        b.append("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n");
        for (ServerMetrics m : engines) {
            b.append("vllm:cache_config_info{").append(m.cacheConfigLabels).append("} 1.0\n");
        }
        counter(b, engines, "vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", m -> m.preemptions);
        counter(b, engines, "vllm:prompt_tokens_total", "Number of prefill tokens processed.", m -> m.promptTokensTotal.get());
        counter(b, engines, "vllm:generation_tokens_total", "Number of generation tokens processed.", m -> m.generationTokensTotal);
        counter(b, engines, "vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.",
                m -> m.prefixQueries);
        counter(b, engines, "vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", m -> m.prefixHits);
        b.append("# HELP vllm:request_success_total Count of successfully processed requests.\n")
                .append("# TYPE vllm:request_success_total counter\n");
        for (ServerMetrics m : engines) {
            m.success(b, "stop", m.successStop.get());
            m.success(b, "length", m.successLength.get());
            m.success(b, "abort", m.successAbort.get());
        }
        histogram(b, engines, "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", m -> m.iterationTokens);
        histogram(b, engines, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", m -> m.ttft);
        histogram(b, engines, "vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", m -> m.tpot);
        histogram(b, engines, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", m -> m.itl);
        histogram(b, engines, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", m -> m.e2e);
        histogram(b, engines, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", m -> m.queue);
        histogram(b, engines, "vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.",
                m -> m.inference);
        histogram(b, engines, "vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
                m -> m.prefill);
        histogram(b, engines, "vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", m -> m.decode);
        histogram(b, engines, "vllm:request_prompt_tokens", "Number of prefill tokens processed.", m -> m.promptTokens);
        histogram(b, engines, "vllm:request_generation_tokens", "Number of generation tokens processed.", m -> m.generationTokens);
        histogram(b, engines, "vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", m -> m.paramsMaxTokens);
        histogram(b, engines, "vllm:request_params_n", "Histogram of the n request parameter.", m -> m.paramsN);
        gauge(b, engines, "infersim:time_scale", "Wall-clock speed-up: model time = wall time x this.", m -> m.timeScale);
        counter(b, engines, "infersim:steps_total", "Engine iterations run.", m -> m.steps);
        histogram(b, engines, "infersim:step_lag_seconds", "Wall seconds by which a step's end was late against its plan.",
                m -> m.stepLag);
        return b.toString();
    }

    private static void gauge(StringBuilder b, List<ServerMetrics> engines, String name, String help, ToDoubleFunction<ServerMetrics> value) {
        header(b, name, help, "gauge");
        for (ServerMetrics m : engines) {
            b.append(name).append('{').append(m.labels).append("} ").append(value.applyAsDouble(m)).append('\n');
        }
    }

    private static void counter(StringBuilder b, List<ServerMetrics> engines, String name, String help,
                                java.util.function.ToLongFunction<ServerMetrics> value) {
        header(b, name, help, "counter");
        for (ServerMetrics m : engines) {
            b.append(name).append('{').append(m.labels).append("} ").append((double) value.applyAsLong(m)).append('\n');
        }
    }

    private void success(StringBuilder b, String reason, long value) {
        b.append("vllm:request_success_total{").append(labels).append(",finished_reason=\"").append(reason).append("\"} ")
                .append((double) value).append('\n');
    }

    private static void histogram(StringBuilder b, List<ServerMetrics> engines, String name, String help,
                                  Function<ServerMetrics, BucketHistogram> histogram) {
        header(b, name, help, "histogram");
        for (ServerMetrics m : engines) {
            m.histogram(b, name, histogram.apply(m));
        }
    }

    private void histogram(StringBuilder b, String name, BucketHistogram h) {
        double[] bounds = h.bounds();
        for (int i = 0; i < bounds.length; i++) {
            b.append(name).append("_bucket{").append(labels).append(",le=\"").append(bounds[i]).append("\"} ")
                    .append((double) h.cumulative(i)).append('\n');
        }
        long count = h.count();
        b.append(name).append("_bucket{").append(labels).append(",le=\"+Inf\"} ").append((double) count).append('\n');
        b.append(name).append("_count{").append(labels).append("} ").append((double) count).append('\n');
        b.append(name).append("_sum{").append(labels).append("} ").append(h.sum()).append('\n');
    }

    private static void header(StringBuilder b, String name, String help, String type) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    static String escapeLabel(String v) {
        return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
