package dev.infersim.bench;

import dev.infersim.common.ConfigException;
import dev.infersim.result.BenchmarkReport;
import dev.infersim.result.LatencyLog;
import dev.infersim.result.LatencyStats;
import dev.infersim.result.RunInfo;
import dev.infersim.result.ServingSummary;
import dev.infersim.workload.Shard;
import dev.infersim.workload.Workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns what a run measured into its {@link BenchResult}: vLLM's result keys ({@link BenchmarkReport}) and, in a fixed
 * order, infersim's client-side keys: the validity ({@link RunValidity}), send lag and read delay, the client's own
 * noise, GC and event-loop CPU, in-flight and steady-state throughput, errors, the ground-truth comparison, percentile
 * curves, time series, scraped server metrics, the machine, and a shard's keys for {@code infersim merge}.
 */
final class BenchResultAssembly {
    /** The send lag's name in a shard's latency log and moments. */
    static final String SEND_LAG = "send_lag";
    /** Above this share of unshared prompt tokens served from cache, the prompts were evidently sent before. */
    private static final double UNEXPECTED_CACHE_HIT_RATE = 0.5;
    private static final double[] CURVE_PERCENTILES =
            {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97.5, 99, 99.5, 99.9, 99.99, 100};

    private final BenchConfig config;
    private final TokenCounter counter;
    /** Wake-up lateness of an idle probe thread, measured once before the first run. */
    private final LatencyStats calibration;

    BenchResultAssembly(BenchConfig config, TokenCounter counter, LatencyStats calibration) {
        this.config = config;
        this.counter = counter;
        this.calibration = calibration;
    }

    /**
     * @param noise      wake-up lateness of the noise probe during the run
     * @param readDelay  how late the event loops ran what was due during the run ({@link LoopLateness})
     * @param gc         the client JVM's own garbage collections during the run ({@link ClientGc#since})
     * @param loops      the event loops' time on a CPU and waiting for one during the run ({@link LoopCpu})
     * @param probeError why the initial test request failed (nothing else was sent), or null
     */
    BenchResult assemble(String date, Workload measured, RunPlan plan, LoadRun.Phase phase, LatencyStats noise,
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
        RunValidity validity = new RunValidity(config, measured, plan, phase, calibration, noise, readDelay, loops,
                asked, probeError);
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("infersim_backend", backend());
        extra.put("infersim_base_url", config.baseUrl());
        extra.put("infersim_endpoint", config.endpoint());
        extra.put("infersim_load_mode", measured.isClosedLoop() ? "closed_loop" : "open_loop");
        extra.put("infersim_valid", validity.invalid.isEmpty());
        extra.put("infersim_invalid_reasons", validity.invalid);
        extra.put("infersim_send_lag_ms", lagSummary(w.sendLag));
        extra.put("infersim_read_delay_ms", lagSummary(readDelay));
        extra.put("infersim_validity", validity.validityJson());
        extra.put("infersim_max_send_lag_ms", validity.maxSendLagMs());
        extra.put("infersim_send_lag_verdict", validity.sendLagVerdictJson());
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
        extra.put("infersim_warmup", ordered("requests", warm.finished(), "failed", warm.stats.failed(),
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
        return new BenchResult(report, w.errors, validity.invalid);
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
        latencies.forEach((name, s) -> moments.put(name, ordered("count", s.count(), "mean_ms", s.meanMs(),
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







    /** A map that keeps its keys in the order given, as the result file should. */
    static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
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
}
