package dev.infersim.server.observe;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.FinishReason;
import dev.infersim.engine.KvCapacity;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

import java.util.List;
import java.util.Map;
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
public final class ServerMetrics {
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
    final BucketHistogram requestTpot = new BucketHistogram(ITL_BUCKETS);
    final BucketHistogram prefillKvComputed;
    final BucketHistogram maxNumGenerationTokens;
    final BucketHistogram stepLag = new BucketHistogram(LAG_BUCKETS);
    final BucketHistogram stepDuration = new BucketHistogram(STEP_BUCKETS);
    /** Longest step lag the nanosecond histogram tells apart; longer ones count as this. */
    private static final long MAX_TRACKED_LAG_NANOS = TimeUnit.MINUTES.toNanos(10);
    /**
     * Step lag in nanoseconds at 3 significant digits, for benchmarks (any thread may read a copy). Its range is fixed:
     * an auto-resizing one grows on the engine thread at the first long lag, allocating and copying its counts while
     * waiting out readers, and a stack sample caught the engine thread inside such a resize 10 ms into a stall.
     */
    public final Histogram stepLagNanos = new ConcurrentHistogram(1, MAX_TRACKED_LAG_NANOS, 3);

    private final AtomicLong successStop = new AtomicLong();
    private final AtomicLong successLength = new AtomicLong();
    private final AtomicLong successAbort = new AtomicLong();
    private final AtomicLong promptTokensTotal = new AtomicLong();
    private final AtomicLong cachedPromptTokensTotal = new AtomicLong();
    /** Prompt tokens whose KV a KV connector pulled from a prefill engine (vLLM's external_kv_transfer source). */
    private final AtomicLong externalPromptTokensTotal = new AtomicLong();
    /** When the series were created, Unix seconds: prometheus_client's {@code _created} samples. */
    private final double createdSeconds = System.currentTimeMillis() / 1000.0;

    // engine snapshot, published after each step
    private volatile int running;
    private volatile int waiting;
    private volatile double kvUsage;
    private volatile long preemptions;
    private volatile long generationTokensTotal;
    private volatile long prefixQueries;
    private volatile long prefixHits;
    private volatile long steps;
    private volatile long externalQueries;
    private volatile long externalHits;
    /** Requests waiting for a prefill's KV to arrive: vLLM's 'deferred' waiting reason (KV transfer). */
    private volatile int deferred;

    public ServerMetrics(String servedModelName, Deployment d, KvCapacity kv, double timeScale, int engineIndex) {
        this.labels = "engine=\"" + engineIndex + "\",model_name=\"" + escapeLabel(servedModelName) + "\"";
        this.cacheConfigLabels = cacheConfigLabels(d, kv, engineIndex);
        this.timeScale = timeScale;
        promptTokens = BucketHistogram.oneTwoFive(kv.maxModelLen());
        generationTokens = BucketHistogram.oneTwoFive(kv.maxModelLen());
        paramsMaxTokens = BucketHistogram.oneTwoFive(kv.maxModelLen());
        prefillKvComputed = BucketHistogram.oneTwoFive(kv.maxModelLen());
        maxNumGenerationTokens = BucketHistogram.oneTwoFive(kv.maxModelLen());
    }

    /**
     * {@code vllm:cache_config_info}'s labels: every field of vLLM's {@code CacheConfig} as {@code str(value)}
     * ({@code vllm-project/vllm@9aaf83ef5}, {@code vllm/config/cache.py} {@code metrics_info}: the instance's
     * {@code __dict__}, in declaration order), then {@code engine}. Those infersim does not model have vLLM's defaults;
     * {@code cache_dtype} is {@code auto} where the KV cache follows the weights.
     */
    private static String cacheConfigLabels(Deployment d, KvCapacity kv, int engineIndex) {
        String[][] fields = {
                {"block_size", Integer.toString(kv.blockSize())},
                {"user_specified_block_size", kv.blockSize() == 16 ? "False" : "True"},
                {"user_specified_mamba_block_size", "False"},
                {"hash_block_size", "None"},
                {"gpu_memory_utilization", Double.toString(d.gpuMemoryUtilization())},
                {"cache_dtype", d.kvCacheDtype() == d.dtype() ? "auto" : d.kvCacheDtype().toString()},
                {"is_attention_free", "False"},
                {"num_gpu_blocks_override", "None"},
                {"sliding_window", "None"},
                {"enable_prefix_caching", d.enablePrefixCaching() ? "True" : "False"},
                {"prefix_caching_hash_algo", d.prefixCachingHashAlgo().vllmName()},
                {"calculate_kv_scales", "False"},
                {"kv_cache_dtype_skip_layers", "[]"},
                {"mamba_page_size_padded", "None"},
                {"mamba_block_size", "None"},
                {"mamba_cache_dtype", "auto"},
                {"mamba_ssm_cache_dtype", "auto"},
                {"mamba_cache_mode", "none"},
                {"num_gpu_blocks", Integer.toString(kv.numBlocks())},
                {"num_cpu_blocks", "None"},
                {"kv_sharing_fast_prefill", "False"},
                {"kv_cache_memory_bytes", "None"},
                {"kv_offloading_size", "None"},
                {"kv_offloading_backend", "native"},
                {"_block_size_resolved", "True"},
                {"engine", Integer.toString(engineIndex)}};
        StringBuilder b = new StringBuilder();
        for (String[] f : fields) {
            b.append(b.length() == 0 ? "" : ",").append(f[0]).append("=\"").append(f[1]).append('"');
        }
        return b.toString();
    }

    /** Replaces what this (unused) instance reports by {@code fake}'s values; the rest stays at 0. */
    public void applyFake(FakeMetrics fake) {
        running = fake.running() == null ? 0 : fake.running().intValue();
        waiting = fake.waiting() == null ? 0 : fake.waiting().intValue();
        kvUsage = fake.kvCacheUsage() == null ? 0 : fake.kvCacheUsage();
        Map<String, BucketHistogram> buckets = Map.of("ttft-buckets-values", ttft, "tpot-buckets-values", requestTpot,
                "e2erl-buckets-values", e2e, "queue-time-buckets-values", queue, "inf-time-buckets-values", inference,
                "prefill-time-buckets-values", prefill, "decode-time-buckets-values", decode);
        fake.bucketCounts().forEach((key, counts) -> buckets.get(key).setCounts(counts));
        Map<String, BucketHistogram> sampled = Map.of("request-prompt-tokens", promptTokens, "request-generation-tokens",
                generationTokens, "request-params-max-tokens", paramsMaxTokens, "request-max-generation-tokens",
                maxNumGenerationTokens);
        fake.samples().forEach((key, values) -> {
            for (long v : values) {
                sampled.get(key).record(v);
            }
        });
        successStop.set(fake.successes().getOrDefault("stop", 0L));
        successLength.set(fake.successes().getOrDefault("length", 0L));
        successAbort.set(fake.successes().getOrDefault("abort", 0L));
        promptTokensTotal.set(fake.promptTokens() == null ? 0 : fake.promptTokens());
        generationTokensTotal = fake.generationTokens() == null ? 0 : fake.generationTokens();
    }

    /** Engine thread: one step of {@code durationNanos} (model time) finished {@code lagNanos} (wall) after its plan. */
    public void recordStep(long tokens, long durationNanos, long lagNanos) {
        iterationTokens.record(tokens);
        stepDuration.record(durationNanos / 1e9);
        stepLag.record(lagNanos / 1e9);
        stepLagNanos.recordValue(Math.min(Math.max(0, lagNanos), MAX_TRACKED_LAG_NANOS));
    }

    /** Engine thread: a request's first token. */
    public void recordFirstToken(EngineRequest r, long nowNanos) {
        ttft.record((nowNanos - r.arrivalNanos()) / 1e9);
        promptTokensTotal.lazySet(promptTokensTotal.get() + r.promptTokens());
        cachedPromptTokensTotal.lazySet(cachedPromptTokensTotal.get() + Math.max(0, r.cachedPromptTokens()));
        externalPromptTokensTotal.lazySet(externalPromptTokensTotal.get() + r.kvTransferTokens());
    }

    /** Engine thread: a later token, {@code gapNanos} after the previous one. */
    public void recordInterToken(long gapNanos) {
        itl.record(gapNanos / 1e9);
        tpot.record(gapNanos / 1e9);
    }

    /** Engine thread: a request finished; {@code n} is its HTTP request's choice count (recorded once, by choice 0). */
    public void recordFinish(EngineRequest r, int choiceIndex, int n) {
        AtomicLong counter = r.finishReason() == FinishReason.STOP ? successStop
                : r.finishReason() == FinishReason.LENGTH ? successLength : successAbort;
        counter.lazySet(counter.get() + 1);
        if (choiceIndex == 0) {
            paramsN.record(n);
            maxNumGenerationTokens.record(r.maxTokens());
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
        prefillKvComputed.record(r.promptTokens() - Math.max(0, r.cachedPromptTokens()));
        generationTokens.record(r.outputTokens());
        requestTpot.record(r.outputTokens() > 1 ? (r.finishedNanos() - r.firstTokenNanos()) / 1e9 / (r.outputTokens() - 1) : 0);
        paramsMaxTokens.record(r.maxTokens());
    }

    /** Engine thread: publishes the engine's gauges and counters. */
    public void snapshot(EngineCore engine, int notYetQueued) {
        running = engine.runningCount();
        waiting = engine.waitingCount() + notYetQueued;
        kvUsage = engine.kvCacheUsage();
        preemptions = engine.preemptions();
        generationTokensTotal = engine.outputTokens();
        prefixQueries = engine.kvCache().queriedTokens();
        prefixHits = engine.kvCache().hitTokens();
        steps = engine.steps();
        externalQueries = engine.kvExternalQueries();
        externalHits = engine.kvTransferredTokens();
        deferred = engine.kvLoadingCount();
    }

    public int running() {
        return running;
    }

    public int waiting() {
        return waiting;
    }

    public double kvUsage() {
        return kvUsage;
    }

    /** Requests that finished, for any reason: vLLM's request_success_total summed over finished_reason. */
    long finished() {
        return successStop.get() + successLength.get() + successAbort.get();
    }

    double timeScale() {
        return timeScale;
    }

    /**
     * The Prometheus text exposition (format 0.0.4) of one server's engines: every {@code vllm:} family
     * {@code PrometheusStatLogger} registers at {@code vllm-project/vllm@9aaf83ef5} ({@code vllm/v1/metrics/loggers.py},
     * with {@code PerfMetricsProm} of {@code vllm/v1/metrics/perf.py}) for one engine without speculative decoding, a KV
     * connector or KV-cache residency sampling, in its order, then infersim's own. Counters and histograms carry the
     * {@code _created} gauges prometheus_client adds. Families infersim has nothing to count for (external and
     * multi-modal caches, the FLOP and byte estimates) stay at 0, as on such a vLLM. {@code legacy} adds what vLLM 0.10
     * and older served and older endpoint pickers scrape: {@code vllm:gpu_cache_usage_perc} and
     * {@code vllm:time_per_output_token_seconds}.
     */
    public static String render(List<ServerMetrics> engines, boolean legacy) {
        StringBuilder b = new StringBuilder(24_576 * engines.size());
        gauge(b, engines, "vllm:num_requests_running", "Number of requests in model execution batches.", m -> m.running);
        gauge(b, engines, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", m -> m.waiting);
        header(b, "vllm:num_requests_waiting_by_reason", "Number of waiting requests by reason. Reason labels: 'capacity' = "
                + "waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, "
                + "blocked status). Sum of all reasons equals vllm:num_requests_waiting.", "gauge");
        for (ServerMetrics m : engines) {
            int deferred = m.deferred;
            m.labelled(b, "vllm:num_requests_waiting_by_reason", "reason", "capacity", m.waiting - deferred);
            m.labelled(b, "vllm:num_requests_waiting_by_reason", "reason", "deferred", deferred);
        }
        header(b, "vllm:engine_sleep_state", "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine "
                + "is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.", "gauge");
        for (ServerMetrics m : engines) {
            m.labelled(b, "vllm:engine_sleep_state", "sleep_state", "awake", 1);
            m.labelled(b, "vllm:engine_sleep_state", "sleep_state", "weights_offloaded", 0);
            m.labelled(b, "vllm:engine_sleep_state", "sleep_state", "discard_all", 0);
        }
        gauge(b, engines, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", m -> m.kvUsage);
        if (legacy) {
            gauge(b, engines, "vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", m -> m.kvUsage);
        }
        counter(b, engines, "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
                m -> m.prefixQueries);
        counter(b, engines, "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", m -> m.prefixHits);
        counter(b, engines, "vllm:external_prefix_cache_queries", "External prefix cache queries from KV connector "
                + "cross-instance cache sharing, in terms of number of queried tokens.", m -> m.externalQueries);
        counter(b, engines, "vllm:external_prefix_cache_hits", "External prefix cache hits from KV connector cross-instance "
                + "cache sharing, in terms of number of cached tokens.", m -> m.externalHits);
        counter(b, engines, "vllm:mm_cache_queries", "Multi-modal cache queries, in terms of number of queried items.", m -> 0);
        counter(b, engines, "vllm:mm_cache_hits", "Multi-modal cache hits, in terms of number of cached items.", m -> 0);
        counter(b, engines, "vllm:num_preemptions", "Cumulative number of preemption from the engine.", m -> m.preemptions);
        counter(b, engines, "vllm:prompt_tokens", "Number of prefill tokens processed.", m -> m.promptTokensTotal.get());
        header(b, "vllm:prompt_tokens_by_source_total", "Number of prompt tokens by source.", "counter");
        for (ServerMetrics m : engines) {
            long cached = m.cachedPromptTokensTotal.get();
            long external = m.externalPromptTokensTotal.get();
            m.labelled(b, "vllm:prompt_tokens_by_source_total", "source", "local_compute",
                    m.promptTokensTotal.get() - cached - external);
            m.labelled(b, "vllm:prompt_tokens_by_source_total", "source", "local_cache_hit", cached);
            m.labelled(b, "vllm:prompt_tokens_by_source_total", "source", "external_kv_transfer", external);
        }
        created(b, engines, "vllm:prompt_tokens_by_source", "Number of prompt tokens by source.", "source",
                "local_compute", "local_cache_hit", "external_kv_transfer");
        counter(b, engines, "vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external).",
                m -> m.cachedPromptTokensTotal.get() + m.externalPromptTokensTotal.get());
        counter(b, engines, "vllm:generation_tokens", "Number of generation tokens processed.", m -> m.generationTokensTotal);
        header(b, "vllm:request_success_total", "Count of successfully processed requests.", "counter");
        for (ServerMetrics m : engines) {
            m.labelled(b, "vllm:request_success_total", "finished_reason", "stop", m.successStop.get());
            m.labelled(b, "vllm:request_success_total", "finished_reason", "length", m.successLength.get());
            m.labelled(b, "vllm:request_success_total", "finished_reason", "abort", m.successAbort.get());
            m.labelled(b, "vllm:request_success_total", "finished_reason", "error", 0);
            m.labelled(b, "vllm:request_success_total", "finished_reason", "repetition", 0);
        }
        created(b, engines, "vllm:request_success", "Count of successfully processed requests.", "finished_reason", "stop",
                "length", "abort", "error", "repetition");
        histogram(b, engines, "vllm:request_prompt_tokens", "Number of prefill tokens processed.", m -> m.promptTokens);
        histogram(b, engines, "vllm:request_generation_tokens", "Number of generation tokens processed.", m -> m.generationTokens);
        histogram(b, engines, "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", m -> m.iterationTokens);
        histogram(b, engines, "vllm:request_max_num_generation_tokens",
                "Histogram of maximum number of requested generation tokens.", m -> m.maxNumGenerationTokens);
        histogram(b, engines, "vllm:request_params_n", "Histogram of the n request parameter.", m -> m.paramsN);
        histogram(b, engines, "vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", m -> m.paramsMaxTokens);
        histogram(b, engines, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", m -> m.ttft);
        histogram(b, engines, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", m -> m.itl);
        histogram(b, engines, "vllm:request_time_per_output_token_seconds",
                "Histogram of time_per_output_token_seconds per request.", m -> m.requestTpot);
        if (legacy) {
            histogram(b, engines, "vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.",
                    m -> m.tpot);
        }
        histogram(b, engines, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", m -> m.e2e);
        histogram(b, engines, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", m -> m.queue);
        histogram(b, engines, "vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.",
                m -> m.inference);
        histogram(b, engines, "vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
                m -> m.prefill);
        histogram(b, engines, "vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", m -> m.decode);
        histogram(b, engines, "vllm:request_prefill_kv_computed_tokens",
                "Histogram of new KV tokens computed during prefill (excluding cached tokens).", m -> m.prefillKvComputed);
        b.append("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n");
        for (ServerMetrics m : engines) {
            b.append("vllm:cache_config_info{").append(m.cacheConfigLabels).append("} 1.0\n");
        }
        counter(b, engines, "vllm:estimated_flops_per_gpu", "Estimated number of floating point operations per GPU (for Model "
                + "Flops Utilization calculations).", m -> 0);
        counter(b, engines, "vllm:estimated_read_bytes_per_gpu", "Estimated number of bytes read from memory per GPU (for "
                + "Model Flops Utilization calculations).", m -> 0);
        counter(b, engines, "vllm:estimated_write_bytes_per_gpu", "Estimated number of bytes written to memory per GPU (for "
                + "Model Flops Utilization calculations).", m -> 0);
        gauge(b, engines, "infersim:time_scale", "Wall-clock speed-up: model time = wall time x this.", m -> m.timeScale);
        counter(b, engines, "infersim:steps", "Engine iterations run.", m -> m.steps);
        histogram(b, engines, "infersim:step_lag_seconds", "Wall seconds by which a step's end was late against its plan.",
                m -> m.stepLag);
        histogram(b, engines, "infersim:step_duration_seconds", "Model seconds per engine iteration.", m -> m.stepDuration);
        return b.toString();
    }

    /** A sample with one label beside the engine's. */
    private void labelled(StringBuilder b, String name, String label, String value, double sample) {
        b.append(name).append('{').append(labels).append(',').append(label).append("=\"").append(value).append("\"} ")
                .append(sample).append('\n');
    }

    /** The {@code _created} gauge family prometheus_client writes after a counter or histogram family. */
    private static void created(StringBuilder b, List<ServerMetrics> engines, String family, String help) {
        header(b, family + "_created", help, "gauge");
        for (ServerMetrics m : engines) {
            b.append(family).append("_created{").append(m.labels).append("} ").append(LoraRequestStates.goFloat(m.createdSeconds))
                    .append('\n');
        }
    }

    /** As above, for a family with one more label, one series per value. */
    private static void created(StringBuilder b, List<ServerMetrics> engines, String family, String help, String label,
                                String... values) {
        header(b, family + "_created", help, "gauge");
        for (ServerMetrics m : engines) {
            for (String v : values) {
                m.labelled(b, family + "_created", label, v, m.createdSeconds);
            }
        }
    }

    private static void gauge(StringBuilder b, List<ServerMetrics> engines, String name, String help, ToDoubleFunction<ServerMetrics> value) {
        header(b, name, help, "gauge");
        for (ServerMetrics m : engines) {
            b.append(name).append('{').append(m.labels).append("} ").append(value.applyAsDouble(m)).append('\n');
        }
    }

    /** A counter family {@code name_total} (prometheus_client's naming for a counter called {@code name}), then its {@code _created}. */
    private static void counter(StringBuilder b, List<ServerMetrics> engines, String name, String help,
                                java.util.function.ToLongFunction<ServerMetrics> value) {
        header(b, name + "_total", help, "counter");
        for (ServerMetrics m : engines) {
            b.append(name).append("_total{").append(m.labels).append("} ").append((double) value.applyAsLong(m)).append('\n');
        }
        created(b, engines, name, help);
    }

    private static void histogram(StringBuilder b, List<ServerMetrics> engines, String name, String help,
                                  Function<ServerMetrics, BucketHistogram> histogram) {
        header(b, name, help, "histogram");
        for (ServerMetrics m : engines) {
            m.histogram(b, name, histogram.apply(m));
        }
        created(b, engines, name, help);
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
