package dev.infersim.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.prediction.EnginePrediction;
import dev.infersim.prediction.FixedPrediction;
import dev.infersim.prediction.WorkloadMoments;
import dev.infersim.result.ResultJson;
import dev.infersim.bench.BenchConfig;
import dev.infersim.bench.BenchResult;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.FixedTiming;
import dev.infersim.server.MockServer;
import dev.infersim.server.ServerOptions;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.sim.Replica;
import dev.infersim.sim.RoundRobinRouter;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import dev.infersim.workload.WorkloadSpecBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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

    @Option(names = "--loads", split = ",", defaultValue = "0.3,0.6,0.85,0.95,1.05,1.6",
            description = "Request rates as fractions of the predicted saturation rate, densest around the knee; past 1 "
                    + "the queue grows without bound; the most overloaded rate measures the capacity, and must be well past "
                    + "it (1.5 or more) for its batch to settle within the run (default: ${DEFAULT-VALUE}).")
    List<Double> loads;

    @Option(names = "--run-seconds", defaultValue = "16",
            description = "How long each rate sends, in model seconds (rate x this many requests, at least 20); this "
                    + "bounds every run, overloaded ones too, and past the knee the queue grows for all of it "
                    + "(default: ${DEFAULT-VALUE}).")
    double runSeconds;

    @Option(names = "--max-extra-runs", defaultValue = "2",
            description = "Measured runs the demo may add after the sweep until its conclusions are stable: a rate "
                    + "bisecting toward where TTFT p99 meets the objective, a repeat of the most overloaded rate for the "
                    + "knee, a repeat of a run flagged invalid (default: ${DEFAULT-VALUE}).")
    int maxExtraRuns;

    @Option(names = "--replications", defaultValue = "6",
            description = "Simulated runs per rate, each with its own seed, for the simulated curve's 95%% band "
                    + "(default: ${DEFAULT-VALUE}).")
    int replications;

    @Option(names = "--num-warmups", defaultValue = "20", description = "Unmeasured requests first, per rate, at most "
            + OptionLimits.MAX_PROMPTS + " (default: ${DEFAULT-VALUE}).")
    int numWarmups;

    @Option(names = "--time-scale", defaultValue = "2",
            description = "The mock runs this many times faster than the modelled GPU (default: ${DEFAULT-VALUE}).")
    double timeScale;

    @Option(names = "--slo-ttft-p99-ms", defaultValue = "150",
            description = "The TTFT p99 objective marked on the charts; the report names the highest rate meeting it by "
                    + "each method, in model time (default: ${DEFAULT-VALUE}).")
    double sloTtftP99Ms;

    @Option(names = "--quick", description = "A short sweep for CI and a first look: loads 0.5,0.9,1.6 (below, near "
            + "and past the knee), 12 model seconds each, 5 warmup requests, no extra runs; flags given explicitly still "
            + "win.")
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
    /** The seed of the next measured run: every run gets its own, so the server's prefix cache never helps it. */
    private long nextSeed;

    @Override
    public Integer call() throws Exception {
        EarlyInterrupt.handOver(); // the demo is the run: an interrupt stops it as it always did, without a word
        applyQuick();
        ConfigException.check(timeScale > 0 && timeScale <= 100, "--time-scale must be in (0, 100], got %s", timeScale);
        ConfigException.check(runSeconds > 0 && runSeconds <= 3600, "--run-seconds must be in (0, 3600], got %s", runSeconds);
        ConfigException.check(numWarmups >= 0, "--num-warmups must be >= 0, got %d", numWarmups);
        ConfigException.check(sloTtftP99Ms > 0, "--slo-ttft-p99-ms must be > 0, got %s", sloTtftP99Ms);
        ConfigException.check(maxExtraRuns >= 0 && maxExtraRuns <= 20, "--max-extra-runs must be in [0, 20], got %d",
                maxExtraRuns);
        ConfigException.check(replications >= 2 && replications <= 100, "--replications must be in [2, 100], got %d",
                replications);
        for (double f : loads) {
            ConfigException.check(f > 0 && f <= 3, "--loads: fractions must be in (0, 3], got %s", f);
        }
        loads = loads.stream().sorted().distinct().toList();
        nextSeed = seed;
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
                + "requests), then up to %d extra runs until the conclusions are stable%n", saturation, loads, runSeconds,
                numWarmups, maxExtraRuns);

        List<DemoRow> rows = new ArrayList<>();
        List<SimulationResult> pairedRuns = new ArrayList<>();
        List<BenchResult> measuredRuns = new ArrayList<>();
        DemoReport.Stability stability;
        int extraRuns = 0;
        MockServer server = MockServer.start(ServerOptions.builder(d).port(0).timeScale(timeScale).seed(seed)
                        .maxWaitingRequests(100_000)
                        .schedulingPolicy(deployment.schedulingPolicy).fixedTiming(fixed).dashboard(dashboard).build())
                .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        if (dashboard) {
            out.println("live dashboard: " + server.baseUrl() + "/dashboard");
        }
        try (BenchmarkClient client = new BenchmarkClient(clientConfig(server))) {
            for (double fraction : loads) {
                measure(client, fraction * saturation, saturation, null, prediction, rows, pairedRuns, measuredRuns, out);
            }
            while (true) {
                stability = measuredReport(rows, saturation, prediction).stability(extraRuns, maxExtraRuns);
                if (stability.stable() || extraRuns >= maxExtraRuns || Double.isNaN(stability.nextRatePerS())) {
                    break;
                }
                extraRuns++;
                measure(client, stability.nextRatePerS(), saturation, stability.nextWhy(), prediction, rows, pairedRuns,
                        measuredRuns, out);
            }
        } finally {
            server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        ReplicatedSweep simulatedCurve = ReplicatedSweep.run(curveRates(rows, saturation), replications,
                (rate, replication) -> {
                    SimulatedRun run = simulateWithCapacity(rate, requestsAt(rate), curveSeed(rate, replication),
                            prediction.meanOutputTokens());
                    return DemoSide.simulated(run.result(), run.capacityWindows());
                });
        DemoReport report = new DemoReport(rows, saturation, simulatedSaturation(saturation), timeScale, sloTtftP99Ms,
                prediction.description(), fixed != null, simulatedCurve, prediction.curve(), stability, extraRuns);
        report.print(out);
        DemoResult result = report.result().withClosedLoop(DemoClosedLoop.runAndPrint(prediction,
                n -> builder(Double.POSITIVE_INFINITY, n, seed), () -> deployment.engine(null, seed), out));
        int near = report.rowNearestTheKnee(rows);
        DemoPage.KneeTimeline kneeTimeline = near < 0 ? null
                : new DemoPage.KneeTimeline(pairedRuns.get(near).timeline().columns(), rows.get(near).rate());
        DemoPage.write(html, result, new DemoPage.Story(workloadWords(),
                fixed == null ? EngineSummary.of(d, PROMPT_TOKENS + (int) MEAN_OUTPUT_TOKENS) : null,
                fixed == null ? null : timingWords(d) + ": each request holds one slot from its first scheduling to its last "
                        + "token, whatever else runs, so the deployment is an M/G/c queue with c = --max-num-seqs.",
                kneeTimeline,
                measuredRuns.isEmpty() ? ResultJson.mapper().createObjectNode() : runMetadata(measuredRuns.get(0))));
        out.println("HTML report written to " + html + " (model time throughout)");
        if (saveResult != null) {
            try {
                ResultJson.write(saveResult, result);
            } catch (ConfigException e) {
                throw new ConfigException("--save-result: " + e.getMessage(), e);
            }
            out.println("Comparison written to " + saveResult);
        }
        return 0;
    }

    /**
     * Measures one rate with a fresh seed (the client's per-request detail gives the capacity windows), simulates
     * the same requests and a long run at that rate, and adds the row.
     */
    private void measure(BenchmarkClient client, double rate, double saturation, String why, DemoPrediction prediction,
                         List<DemoRow> rows, List<SimulationResult> pairedRuns, List<BenchResult> measuredRuns,
                         PrintStream out) throws IOException {
        long pointSeed = nextSeed++;
        out.printf(Locale.ROOT, "  rate %.2f req/s (%.0f%% of saturation)%s: measuring, simulating, predicting...%n",
                rate, 100 * rate / saturation, why == null ? "" : ", " + why);
        int requests = requestsAt(rate);
        Path detail = Files.createTempFile("infersim-demo-", ".jsonl");
        BenchResult measured;
        double[] serviceWindows;
        try {
            measured = client.run(Workload.open(spec(rate * timeScale, requests + numWarmups, pointSeed)), numWarmups,
                    0, 0, metadata(pointSeed), detail);
            serviceWindows = LateServiceRate.windows(detail, prediction.meanOutputTokens());
        } finally {
            Files.deleteIfExists(detail);
        }
        SimulatedRun simulated = simulateWithCapacity(rate, requests, pointSeed, prediction.meanOutputTokens());
        SimulationResult steady = simulate(rate, STEADY_RUN_REQUESTS, pointSeed, null);
        rows.add(new DemoRow(rate, rate / saturation, DemoSide.measured(measured.result(), timeScale, serviceWindows),
                DemoSide.simulated(simulated.result(), simulated.capacityWindows()),
                prediction.at(rate), DemoSide.simulated(steady, new double[0]), measured.keys().groundTruth().ttftAbsErrorMs().p99(), measured.valid(),
                measured.invalidReasons(), why));
        pairedRuns.add(simulated.result());
        measuredRuns.add(measured);
    }

    /** The conclusions from the measured rows alone, as the sweep goes. */
    private DemoReport measuredReport(List<DemoRow> rows, double saturation, DemoPrediction prediction) {
        return new DemoReport(rows, saturation, Double.NaN, timeScale, sloTtftP99Ms, prediction.description(),
                fixed != null, null, List.of(), null, 0);
    }

    /**
     * The simulated curve's rates: every 5% of the predicted saturation rate up to past the highest measured rate,
     * and every measured rate.
     */
    private static double[] curveRates(List<DemoRow> rows, double saturation) {
        double top = rows.stream().mapToDouble(DemoRow::rate).max().orElse(saturation);
        java.util.TreeSet<Double> rates = new java.util.TreeSet<>();
        for (int k = 1; k * 0.05 * saturation < top * 1.001; k++) {
            rates.add(k * 0.05 * saturation);
        }
        rows.forEach(r -> rates.add(r.rate()));
        return rates.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** A seed for each replication at each rate of the simulated curve, apart from every measured run's. */
    private long curveSeed(double rate, int replication) {
        return seed + 1_000_003L * (1 + replication) + Math.round(rate * 1_000);
    }

    /** {@code --quick}: a short sweep that still crosses the knee, for CI and a first look. */
    private void applyQuick() {
        if (!quick) {
            return;
        }
        var parsed = spec.commandLine().getParseResult();
        if (!parsed.hasMatchedOption("--loads")) {
            loads = List.of(0.5, 0.9, 1.6);
        }
        if (!parsed.hasMatchedOption("--max-extra-runs")) {
            maxExtraRuns = 0;
        }
        if (!parsed.hasMatchedOption("--num-warmups")) {
            numWarmups = 5;
        }
        if (!parsed.hasMatchedOption("--run-seconds")) {
            runSeconds = 12;
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

    /** What the page tells of the measured runs: the first one's version, workload, time scale, machine, model, date. */
    private static ObjectNode runMetadata(BenchResult run) {
        ObjectNode written = run.tree();
        ObjectNode m = ResultJson.mapper().createObjectNode();
        for (String k : List.of("infersim_version", "infersim_workload", "infersim_demo_time_scale", "infersim_machine",
                "model_id", "date")) {
            if (written.has(k)) {
                m.set(k, written.get(k));
            }
        }
        return m;
    }

    /** A measured run's metadata: the report must carry the version and workload, as bench and sweep reports do. */
    private ObjectNode metadata(long workloadSeed) {
        ObjectNode workload = ResultJson.mapper().createObjectNode();
        workload.put("dataset_name", "random");
        workload.put("random_input_len", PROMPT_TOKENS);
        workload.put("eos_mean_tokens", MEAN_OUTPUT_TOKENS);
        workload.put("max_tokens", MAX_TOKENS);
        workload.put("seed", workloadSeed);
        ObjectNode m = ResultJson.mapper().createObjectNode();
        m.put("infersim_version", Version.current());
        m.set("infersim_workload", workload);
        m.put("infersim_demo_time_scale", timeScale);
        return m;
    }

    private WorkloadSpec spec(double ratePerS, long requests, long workloadSeed) {
        return builder(ratePerS, requests, workloadSeed).build();
    }

    private WorkloadSpecBuilder builder(double ratePerS, long requests, long workloadSeed) {
        return WorkloadSpec.builder().datasetName("random").randomInputLen(PROMPT_TOKENS).randomOutputLen(MAX_TOKENS)
                .eosMeanTokens(MEAN_OUTPUT_TOKENS).requestRate(ratePerS).numPrompts(requests).seed(workloadSeed);
    }

    /**
     * The same rate simulated for this many requests: long enough for the steady state the chain describes, which a
     * run of a few hundred requests near saturation does not reach (its batch is still filling when it ends).
     */
    static final int STEADY_RUN_REQUESTS = 20_000;

    private SimulationResult simulate(double rate, int requests, long workloadSeed, RequestLogWriter detail) {
        EngineCore engine = deployment.engine(fixed, workloadSeed);
        return new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(),
                SimulationOptions.defaults().withWarmups(numWarmups), detail)
                .run(Workload.open(spec(rate, requests + numWarmups, workloadSeed)));
    }

    /** A simulated run with its capacity windows ({@link LateServiceRate.windows}), per model second. */
    record SimulatedRun(SimulationResult result, double[] capacityWindows) {
    }

    private SimulatedRun simulateWithCapacity(double rate, int requests, long workloadSeed, double meanOutputTokens) {
        try {
            Path detail = Files.createTempFile("infersim-demo-sim-", ".jsonl");
            try {
                SimulationResult result;
                try (RequestLogWriter writer = new RequestLogWriter(detail, false)) {
                    result = simulate(rate, requests, workloadSeed, writer);
                }
                return new SimulatedRun(result, LateServiceRate.windows(detail, meanOutputTokens));
            } finally {
                Files.deleteIfExists(detail);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("demo: cannot write a simulated run's detail: " + e.getMessage(), e);
        }
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


}
