package dev.infersim.cli;

import dev.infersim.result.OutputFile;
import dev.infersim.result.RunInfo;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.infersim.bench.BenchConfig;
import dev.infersim.bench.BenchResult;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.engine.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.FixedTiming;
import dev.infersim.server.MockServer;
import dev.infersim.server.ServerOptions;
import dev.infersim.result.GoodputSlo;
import dev.infersim.sim.Replica;
import dev.infersim.sim.RoundRobinRouter;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code infersim demo}: the same workload measured three ways. The mock server runs in-process on the engine model and
 * the real clock (sped up by {@code --time-scale}); the benchmark client drives it over HTTP through a request-rate
 * sweep and checks itself against the server's ground truth; the simulator replays the same requests in virtual time;
 * the queueing model predicts them in closed form. One table shows where the three agree, and says why where they do not.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Measure (mock server + benchmark client), simulate and predict one workload side by side over a "
                + "request-rate sweep past the knee; prints one table and writes an HTML page. Bundled defaults, about 1.5 minutes.")
public final class DemoCommand implements Callable<Integer> {
    private static final int PROMPT_TOKENS = 512;
    private static final int MAX_TOKENS = 1024;
    private static final double MEAN_OUTPUT_TOKENS = 128;

    @Mixin
    DeploymentOptions deployment;

    @Mixin
    TimingOptions timing;

    @Spec
    CommandSpec spec;

    @Option(names = "--loads", split = ",", defaultValue = "0.25,0.5,0.75,0.9,1.1,1.3",
            description = "Request rates as fractions of the predicted saturation rate; past 1 the queue grows without "
                    + "bound (default: ${DEFAULT-VALUE}).")
    List<Double> loads;

    @Option(names = "--run-seconds", defaultValue = "20",
            description = "How long each rate sends, in model seconds (rate x this many requests, at least 20); this "
                    + "bounds every run, overloaded ones too, and past the knee the queue grows for all of it "
                    + "(default: ${DEFAULT-VALUE}).")
    double runSeconds;

    @Option(names = "--num-warmups", defaultValue = "20", description = "Unmeasured requests first, per rate (default: ${DEFAULT-VALUE}).")
    int numWarmups;

    @Option(names = "--time-scale", defaultValue = "2",
            description = "The mock runs this many times faster than the modelled GPU (default: ${DEFAULT-VALUE}).")
    double timeScale;

    @Option(names = "--slo-ttft-p99-ms", defaultValue = "150",
            description = "The TTFT p99 objective marked on the charts; the report names the highest rate meeting it by "
                    + "each method, in model time (default: ${DEFAULT-VALUE}).")
    double sloTtftP99Ms;

    @Option(names = "--quick", description = "A short sweep for CI and a first look: loads 0.5,1.3 (one on each side of "
            + "the knee), 5 warmup requests, at 3x; flags given explicitly still win.")
    boolean quick;

    @Option(names = "--dashboard", description = "Serve the mock's live dashboard while the sweep runs (its URL is "
            + "printed at the start) to watch the queue form as the rate passes the knee.")
    boolean dashboard;

    @Option(names = "--seed", defaultValue = "0", description = "Workload seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--html", defaultValue = "infersim-demo.html", description = "HTML report (default: ${DEFAULT-VALUE}).")
    Path html;

    @Option(names = "--save-result", paramLabel = "FILE", description = "Also write the comparison as JSON.")
    Path saveResult;

    /** Fixed latencies in place of the cost model, or null: set from {@link #timing} when the demo starts. */
    private FixedTiming fixed;

    @Override
    public Integer call() throws Exception {
        EarlyInterrupt.handOver(); // the demo is the run: an interrupt stops it as it always did, without a word
        applyQuick();
        ConfigException.check(timeScale > 0 && timeScale <= 100, "--time-scale must be in (0, 100], got %s", timeScale);
        ConfigException.check(runSeconds > 0 && runSeconds <= 3600, "--run-seconds must be in (0, 3600], got %s", runSeconds);
        ConfigException.check(numWarmups >= 0, "--num-warmups must be >= 0, got %d", numWarmups);
        ConfigException.check(sloTtftP99Ms > 0, "--slo-ttft-p99-ms must be > 0, got %s", sloTtftP99Ms);
        for (double f : loads) {
            ConfigException.check(f > 0 && f <= 3, "--loads: fractions must be in (0, 3], got %s", f);
        }
        loads = loads.stream().sorted().distinct().toList();
        Deployment d = deployment.deployment();
        fixed = timing.fixedTiming();
        PrintStream out = System.out;
        DemoPrediction prediction = fixed == null
                ? new DemoPrediction.Chain(new EnginePrediction(d, WorkloadMoments.of(Workload.open(spec(1, 50_000, seed)), 50_000)))
                : new DemoPrediction.MgcQueue(new FixedPrediction(fixed, d.maxNumSeqs(), Workload.open(spec(1, 50_000, seed)), 50_000));
        double saturation = prediction.saturationRatePerS();
        out.printf(Locale.ROOT, "infersim demo: %s, random prompts of %d tokens, geometric outputs (mean %.0f, max %d), "
                        + "Poisson arrivals; mock at %.0fx real time%n", timingWords(d), PROMPT_TOKENS,
                MEAN_OUTPUT_TOKENS, MAX_TOKENS, timeScale);
        out.printf(Locale.ROOT, "predicted saturation: %.2f req/s; sweeping %s of it, %.0f model seconds each (+%d warmup "
                + "requests)%n", saturation, loads, runSeconds, numWarmups);

        List<Row> rows = new ArrayList<>();
        List<Map<String, Object>> measuredRuns = new ArrayList<>();
        Map<String, Object> kneeTimeline = null;
        double kneeDistance = Double.POSITIVE_INFINITY;
        MockServer server = MockServer.start(ServerOptions.builder(d).port(0).timeScale(timeScale).seed(seed)
                        .maxWaitingRequests(100_000)
                        .schedulingPolicy(deployment.schedulingPolicy).fixedTiming(fixed).dashboard(dashboard).build())
                .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        if (dashboard) {
            out.println("live dashboard: " + server.baseUrl() + "/dashboard");
        }
        try (BenchmarkClient client = new BenchmarkClient(clientConfig(server))) {
            for (int i = 0; i < loads.size(); i++) {
                double fraction = loads.get(i);
                double rate = fraction * saturation;
                // a fresh seed per rate: the server's prefix cache must not remember the previous rate's prompts
                long pointSeed = seed + i;
                out.printf(Locale.ROOT, "  rate %.2f req/s (%.0f%% of saturation): measuring, simulating, predicting...%n",
                        rate, 100 * fraction);
                int requests = requestsAt(rate);
                BenchResult measured = client.run(Workload.open(spec(rate * timeScale, requests + numWarmups, pointSeed)),
                        numWarmups, 0, 0, metadata(pointSeed));
                SimulationResult simulated = simulate(rate, requests, pointSeed);
                SimulationResult steady = simulate(rate, STEADY_RUN_REQUESTS, pointSeed);
                rows.add(new Row(rate, fraction, Side.measured(measured.fields(), timeScale), Side.simulated(simulated),
                        prediction.at(rate), Side.simulated(steady), groundTruthP99(measured.fields()),
                        measured.valid(), invalidReasons(measured.fields())));
                measuredRuns.add(measured.fields());
                if (Math.abs(fraction - 1) < kneeDistance) {
                    kneeDistance = Math.abs(fraction - 1);
                    kneeTimeline = simulated.timeline().toJson();
                    kneeTimeline.put("request_rate", rate);
                }
            }
        } finally {
            server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        DemoReport report = new DemoReport(rows, saturation, simulatedSaturation(saturation), timeScale, sloTtftP99Ms,
                prediction.description(), fixed != null);
        report.print(out);
        DemoPage.write(html, report, new DemoPage.Story(workloadWords(),
                fixed == null ? EngineSummary.of(d, PROMPT_TOKENS + (int) MEAN_OUTPUT_TOKENS) : null,
                fixed == null ? null : timingWords(d) + ": each request holds one slot from its first scheduling to its last "
                        + "token, whatever else runs, so the deployment is an M/G/c queue with c = --max-num-seqs.",
                kneeTimeline,
                measuredRuns.isEmpty() ? Map.of() : runMetadata(measuredRuns.get(0))));
        out.println("HTML report written to " + html + " (model time throughout)");
        if (saveResult != null) {
            try {
                OutputFile.write(saveResult, stream -> new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(stream, report.toMap()));
            } catch (ConfigException e) {
                throw new ConfigException("--save-result: " + e.getMessage(), e);
            }
            out.println("Comparison written to " + saveResult);
        }
        return 0;
    }

    /** {@code --quick}: a short sweep that still crosses the knee, for CI and a first look. */
    private void applyQuick() {
        if (!quick) {
            return;
        }
        var parsed = spec.commandLine().getParseResult();
        if (!parsed.hasMatchedOption("--loads")) {
            loads = List.of(0.5, 1.3);
        }
        if (!parsed.hasMatchedOption("--num-warmups")) {
            numWarmups = 5;
        }
        if (!parsed.hasMatchedOption("--time-scale")) {
            timeScale = 3;
        }
    }

    /** The deployment as the demo names it: the model on its GPU, or under fixed timing the latencies and slots. */
    private String timingWords(Deployment d) {
        return fixed == null ? d.model().name() + " on " + d.gpu().name() : String.format(Locale.ROOT,
                "fixed timing (TTFT %s ms, inter-token latency %s ms), %d slots (--max-num-seqs)",
                fmt(fixed.timeToFirstTokenMs()), fmt(fixed.interTokenLatencyMs()), d.maxNumSeqs());
    }

    private static String fmt(double ms) {
        return ms == Math.rint(ms) ? String.valueOf((long) ms) : String.valueOf(ms);
    }

    private String workloadWords() {
        return String.format(Locale.ROOT, "%s. Each request: a random prompt of %d tokens and a geometric output "
                        + "length (mean %.0f tokens, at most %d); arrivals are Poisson. Each rate sends for %.0f model "
                        + "seconds (+%d warmup requests). The mock ran %.0fx faster than the modelled GPU; every number "
                        + "here is converted back to model time.", timingWords(deployment.deployment()), PROMPT_TOKENS,
                MEAN_OUTPUT_TOKENS, MAX_TOKENS, runSeconds, numWarmups, timeScale);
    }

    private int requestsAt(double rate) {
        return (int) Math.max(20, Math.round(rate * runSeconds));
    }

    private static Map<String, Object> runMetadata(Map<String, Object> run) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String k : List.of("infersim_version", "infersim_workload", "infersim_demo_time_scale", "infersim_machine",
                "model_id", "date")) {
            if (run.containsKey(k)) {
                m.put(k, run.get(k));
            }
        }
        return m;
    }

    @SuppressWarnings("unchecked")
    private static List<String> invalidReasons(Map<String, Object> fields) {
        Object reasons = fields.get("infersim_invalid_reasons");
        return reasons instanceof List<?> l ? (List<String>) l : List.of();
    }

    /** A measured run's metadata: the report must carry the version and workload, as bench and sweep reports do. */
    private Map<String, Object> metadata(long workloadSeed) {
        Map<String, Object> workload = new LinkedHashMap<>();
        workload.put("dataset_name", "random");
        workload.put("random_input_len", PROMPT_TOKENS);
        workload.put("eos_mean_tokens", MEAN_OUTPUT_TOKENS);
        workload.put("max_tokens", MAX_TOKENS);
        workload.put("seed", workloadSeed);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("infersim_version", Version.current());
        m.put("infersim_workload", workload);
        m.put("infersim_demo_time_scale", timeScale);
        return m;
    }

        private WorkloadSpec spec(double ratePerS, long requests, long workloadSeed) {
        return WorkloadSpec.builder().datasetName("random").randomInputLen(PROMPT_TOKENS).randomOutputLen(MAX_TOKENS)
                .eosMeanTokens(MEAN_OUTPUT_TOKENS).requestRate(ratePerS).numPrompts(requests).seed(workloadSeed).build();
    }

    /**
     * The same rate simulated for this many requests: long enough for the steady state the chain describes, which a
     * run of a few hundred requests near saturation does not reach (its batch is still filling when it ends).
     */
    static final int STEADY_RUN_REQUESTS = 20_000;

    private SimulationResult simulate(double rate, int requests, long workloadSeed) {
        EngineCore engine = deployment.engine(fixed, workloadSeed);
        return new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(),
                SimulationOptions.defaults().withWarmups(numWarmups), null)
                .run(Workload.open(spec(rate, requests + numWarmups, workloadSeed)));
    }

    /**
     * The simulated engine's capacity: completions per second of a long run offered twice the predicted saturation
     * rate, long enough that filling and draining the batch barely matter.
     */
    private double simulatedSaturation(double predicted) {
        EngineCore engine = deployment.engine(fixed, seed);
        SimulationResult r = new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(),
                SimulationOptions.defaults(), null).run(Workload.open(spec(2 * predicted, STEADY_RUN_REQUESTS, seed)));
        return r.stats().completed() / (r.durationNanos() / 1e9);
    }

    private BenchConfig clientConfig(MockServer server) {
        return new BenchConfig(server.baseUrl(), "/v1/completions", server.options().servedModelName(), null, false,
                // overload past the knee may fail requests: that is what the sweep measures, not a broken run
                120_000, Math.round(5e6), 1.0, GoodputSlo.NONE, List.of("ttft", "tpot", "itl", "e2el"), List.of(50.0, 99.0),
                4096, null, 500);
    }

    @SuppressWarnings("unchecked")
    private static double groundTruthP99(Map<String, Object> fields) {
        Map<String, Object> truth = (Map<String, Object>) fields.get("infersim_ground_truth");
        Map<String, Object> ttft = truth == null ? null : (Map<String, Object>) truth.get("ttft_abs_error_ms");
        return ttft == null || ttft.get("p99") == null ? Double.NaN : ((Number) ttft.get("p99")).doubleValue();
    }

    /** One rate of the sweep, seen three ways. */
    record Row(double rate, double fraction, Side measured, Side simulated, Side predicted, Side steadySimulated,
               double groundTruthP99Ms, boolean measuredValid, List<String> invalidReasons) {
    }

    /**
     * The numbers the table and charts compare, in model time (milliseconds and per second of the modelled GPU).
     * Requests waiting is Little's law on the engine's waiting room (requests taken in per second times the mean wait
     * from arrival to first scheduling); past saturation it measures how long the run lasted, not a steady state.
     * {@code sendRatePerS} is the rate actually offered while sending (a short Poisson run misses its nominal rate).
     */
    record Side(double ttftP50Ms, double ttftP99Ms, double tpotP50Ms, double outputTokensPerS, double requestsPerS,
                double meanWaiting, double sendRatePerS, double lateCompletionsPerS, boolean saturated) {

        static Side measured(Map<String, Object> f, double timeScale) {
            double requestsPerS = num(f, "infersim_steady_request_throughput") / timeScale;
            return new Side(num(f, "median_ttft_ms") * timeScale, num(f, "p99_ttft_ms") * timeScale,
                    num(f, "median_tpot_ms") * timeScale, num(f, "infersim_steady_output_throughput") / timeScale,
                    requestsPerS, requestsPerS * num(f, "infersim_mean_queue_time_ms") * timeScale / 1e3,
                    num(f, "infersim_steady_send_rate") / timeScale, LateCompletions.ofSeries(f) / timeScale, false);
        }

        static Side simulated(SimulationResult r) {
            Map<String, Object> f = r.report(new dev.infersim.result.RunInfo("", "infersim-sim", "m", "m", 1, 1, 1, 0,
                    List.of("ttft", "tpot"), List.of(50.0, 99.0))).fields();
            double requestsPerS = num(f, "infersim_steady_request_throughput");
            return new Side(num(f, "median_ttft_ms"), num(f, "p99_ttft_ms"), num(f, "median_tpot_ms"),
                    num(f, "infersim_steady_output_throughput"), requestsPerS,
                    requestsPerS * num(f, "infersim_mean_queue_time_ms") / 1e3, num(f, "infersim_steady_send_rate"),
                    LateCompletions.ofTimeline(r.timeline()), r.saturation().saturated());
        }

        /**
         * Overloaded: over the second half of sending, requests finished at under 90% of the rate they were sent
         * (the 90% of LoadSweep's rule); below the knee they finish as fast as they come.
         */
        boolean overloaded() {
            return saturated || lateCompletionsPerS < 0.9 * sendRatePerS;
        }

        private static double num(Map<String, Object> f, String key) {
            Object v = f.get(key);
            return v instanceof Number n ? n.doubleValue() : Double.NaN;
        }
    }

    /** A side as JSON; null where a method has no number (the prediction past the knee). */
    static Map<String, Object> sideMap(Side s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("median_ttft_ms", finiteOrNull(s.ttftP50Ms()));
        m.put("p99_ttft_ms", finiteOrNull(s.ttftP99Ms()));
        m.put("median_tpot_ms", finiteOrNull(s.tpotP50Ms()));
        m.put("steady_output_throughput", finiteOrNull(s.outputTokensPerS()));
        m.put("steady_request_throughput", finiteOrNull(s.requestsPerS()));
        m.put("mean_requests_waiting", finiteOrNull(s.meanWaiting()));
        m.put("send_rate", finiteOrNull(s.sendRatePerS()));
        m.put("late_completion_rate", finiteOrNull(s.lateCompletionsPerS()));
        m.put("saturated", s.saturated());
        m.put("overloaded", s.overloaded());
        return m;
    }

    private static Double finiteOrNull(double v) {
        return Double.isFinite(v) ? v : null;
    }
}
