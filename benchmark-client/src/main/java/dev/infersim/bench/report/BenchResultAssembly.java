package dev.infersim.bench.report;

import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.config.RunPlan;
import dev.infersim.bench.measure.ClientGc;
import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.bench.measure.LoopCpu;
import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.bench.measure.MetricsScraper;
import dev.infersim.bench.measure.RunValidity;
import dev.infersim.bench.measure.StreamFindings;
import dev.infersim.bench.measure.TokenCountMethod;
import dev.infersim.bench.run.LoadRun;
import dev.infersim.bench.run.PromptRenderer;
import dev.infersim.bench.run.TokenCounter;
import dev.infersim.common.ConfigException;
import dev.infersim.result.LatencyLog;
import dev.infersim.result.LatencyStats;
import dev.infersim.result.ResultJson;
import dev.infersim.result.RunInfo;
import dev.infersim.result.ServingReport;
import dev.infersim.result.ServingSummary;
import dev.infersim.workload.Shard;
import dev.infersim.workload.Workload;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns what a run measured into its {@link BenchResult}: vLLM's result keys ({@link ServingReport}) and, in a fixed
 * order, infersim's client-side keys ({@link ClientKeys}): the validity ({@link RunValidity}), send lag and read delay, the client's own
 * noise, GC and event-loop CPU, in-flight and steady-state throughput, errors, the ground-truth comparison, percentile
 * curves, time series, scraped server metrics, the machine, and a shard's keys for {@code infersim merge}.
 */
public final class BenchResultAssembly {
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

    public BenchResultAssembly(BenchConfig config, TokenCounter counter, LatencyStats calibration) {
        this.config = config;
        this.counter = counter;
        this.calibration = calibration;
    }

    /**
     * @param noise      wake-up lateness of the noise probe during the run
     * @param gc         the client JVM's own garbage collections during the run ({@link ClientGc#since})
     * @param loops      the event loops' time on a CPU and waiting for one during the run ({@link LoopCpu})
     * @param probeError why the initial test request failed (nothing else was sent), or null
     */
    public BenchResult assemble(String date, Workload measured, RunPlan plan, LoadRun.Phase phase, LatencyStats noise,
                         ClientGc.Collections gc, long[] loops,
                         MetricsScraper.Timeline scraped, String probeError) {
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
        RunValidity validity = new RunValidity(config, measured, plan, w, phase.interrupted(), calibration,
                noise, loops, asked, probeError);
        double steady = measured.isClosedLoop() ? w.closedLoopThroughput(phase.meanInFlight())
                : w.stats().steadyRequestThroughput();
        double steadyOutput = steady * w.stats().meanOutputTokens();
        double offered = w.stats().steadySendRate();
        ClientKeys.TruthError truth = w.truthError();
        TokenCountMethod counted = w.weakestTokenCountMethod();
        MeasuredWindow warm = phase.warmup();
        List<String> outputErrors = new ArrayList<>();
        ClientKeys.ShardKeys shardKeys = plan.shard() == null ? null : shardKeys(plan, w, outputErrors);
        // completed + failed + cancelled = sent: an interrupt leaves no request unaccounted for.
        ClientKeys keys = new ClientKeys(backend(), config.baseUrl(), config.endpoint(),
                measured.isClosedLoop() ? "closed_loop" : "open_loop", validity.invalid().isEmpty(),
                validity.invalid(), ClientKeys.LagSummary.of(w.sendLag()),
                ClientKeys.LagSummary.of(w.readLateness()), validity.validity(), validity.maxSendLagMs(),
                validity.sendLagVerdict(), new ClientKeys.NoiseMs(ClientKeys.LagSummary.of(calibration),
                ClientKeys.LagSummary.of(noise)), gc,
                loops[0] < 0 ? null : new ClientKeys.LoopsMs(loops[0] / 1e6, loops[1] / 1e6),
                phase.maxInFlight(), phase.meanInFlight(), Double.isNaN(steady) ? null : steady,
                Double.isNaN(steadyOutput) ? null : steadyOutput, Double.isNaN(offered) ? null : offered, w.sent(),
                w.cancelled(), w.errors().byType(), w.promptMismatches(), w.promptMismatchMaxTokens(),
                w.promptMismatchExamples(), truth, StreamFindings.of(truth, null), w.timeScale(),
                w.timeScale() == 1 ? null : modelTime(w), counted == null ? null : counted.key(), warnings(w),
                new ClientKeys.Warmup(warm.finished(), warm.stats().failed(), warm.cancelled(),
                        warm.finished() == 0 ? 0.0 : warm.durationNanos() / 1e9),
                phase.interrupted(), probeError, plan.detailFile() == null ? null : plan.detailFile().toString(),
                curves(w.stats(), w.sendLag()), w.timeSeries(), scraped, ClientKeys.Machine.current(), shardKeys,
                ClientKeys.RunMetadata.NONE, null, outputErrors.isEmpty() ? null : List.copyOf(outputErrors));
        ServingReport<ClientKeys> report = ServingReport.of(info, w.stats(), w.durationNanos(), keys);
        // As in vLLM, the measured keys win: --metadata completed=999 must not rewrite what was measured.
        Set<String> written = new HashSet<>();
        ResultJson.tree(report.result()).fieldNames().forEachRemaining(written::add);
        report = report.withProducer(keys.withMetadata(ClientKeys.RunMetadata.of(plan.metadata()).without(written)));
        return new BenchResult(report, w.errors());
    }

    /**
     * What {@code infersim merge} needs of a shard beyond vLLM's keys: which shard, its measured window on the wall
     * clock (for the union of the shards' spans), its exact good-request count, and each latency's exact count, mean
     * and deviation, whose histograms go to the plan's HdrHistogram log (kept beside the result as RESULT.hlog).
     */
    private static ClientKeys.ShardKeys shardKeys(RunPlan plan, MeasuredWindow w, List<String> outputErrors) {
        long scheduleStartEpochMillis = plan.startAtEpochMillis() > 0 ? plan.startAtEpochMillis()
                : System.currentTimeMillis() - (System.nanoTime() - w.scheduleStartNanos()) / 1_000_000L;
        Map<String, LatencyStats> latencies = new LinkedHashMap<>();
        for (String name : ServingSummary.LATENCIES) {
            latencies.put(name, w.stats().latency(name));
        }
        latencies.put(SEND_LAG, w.sendLag());
        Map<String, ClientKeys.Moments> moments = new LinkedHashMap<>();
        latencies.forEach((name, s) -> moments.put(name, ClientKeys.Moments.of(s)));
        double windowStartS = (w.startNanos() - w.scheduleStartNanos()) / 1e9;
        double windowEndS = windowStartS + w.durationNanos() / 1e9;
        if (plan.latencyLog() != null) {
            try {
                LatencyLog.write(plan.latencyLog(), scheduleStartEpochMillis + (long) (windowStartS * 1e3),
                        scheduleStartEpochMillis + (long) Math.ceil(windowEndS * 1e3), latencies);
            } catch (ConfigException e) {
                outputErrors.add(e.getMessage());
            }
        }
        return new ClientKeys.ShardKeys(plan.shard().index(), plan.shard().count(), scheduleStartEpochMillis,
                windowStartS, windowEndS, w.stats().goodRequests(), moments);
    }

    /**
     * The latencies in the server's model time when it runs faster than the modelled GPU: the wall-clock figures times
     * the time scale (TPOT 0.7 ms at 10x is 7 ms on the modelled GPU).
     */
    private static Map<String, ClientKeys.ModelTime> modelTime(MeasuredWindow w) {
        Map<String, ClientKeys.ModelTime> m = new LinkedHashMap<>();
        for (String metric : List.of("ttft", "tpot", "itl", "e2el")) {
            LatencyStats s = w.stats().metric(metric);
            m.put(metric, new ClientKeys.ModelTime(s.meanMs() * w.timeScale(), s.medianMs() * w.timeScale(),
                    s.percentileMs(99) * w.timeScale()));
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


    private String backend() {
        return config.chat() ? "openai-chat" : "openai";
    }

    /** vLLM's four metrics, chunk ICL and send lag at {@link #CURVE_PERCENTILES}, for the report's curves. */
    static ClientKeys.PercentileCurves curves(ServingSummary stats, LatencyStats sendLag) {
        return new ClientKeys.PercentileCurves(Arrays.stream(CURVE_PERCENTILES).boxed().toList(),
                curve(stats.metric("ttft")), curve(stats.metric("tpot")), curve(stats.metric("itl")),
                curve(stats.metric("e2el")), curve(stats.icl()), curve(sendLag));
    }

    private static List<Double> curve(LatencyStats s) {
        List<Double> values = new ArrayList<>(CURVE_PERCENTILES.length);
        for (double p : CURVE_PERCENTILES) {
            values.add(s.percentileMs(p));
        }
        return values;
    }
}
