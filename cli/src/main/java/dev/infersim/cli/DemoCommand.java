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
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
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
                + "request-rate sweep past the knee; prints one table and writes an HTML page. How long it takes depends on "
                + "the time scale its calibration chooses: the wall time is printed at the end.")
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

    @Option(names = "--time-scale", defaultValue = "auto", paramLabel = "auto|FACTOR",
            description = "How many times faster than the modelled GPU the mock runs. auto (the default): measured first "
                    + "in short calibration runs, the fastest scale from " + MAX_AUTO_SCALE_WORDS + " down to " + MIN_AUTO_SCALE_WORDS
                    + " at which the client's TTFT error stays within --max-noise-share of the objective in model time "
                    + "(a busy machine slows the model clock). A number: that scale, its error measured and reported.")
    String timeScaleOption;

    @Option(names = "--max-noise-share", defaultValue = "0.05",
            description = "The share of the TTFT p99 objective the client's TTFT error (p99, in model time) may take, "
                    + "which sets the time scale under --time-scale auto (default: ${DEFAULT-VALUE}).")
    double maxNoiseShare;

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

    /** The fastest and slowest time scales {@code --time-scale auto} may choose. */
    static final double MAX_AUTO_SCALE = 4;
    static final double MIN_AUTO_SCALE = 0.2;
    static final String MAX_AUTO_SCALE_WORDS = "4x";
    static final String MIN_AUTO_SCALE_WORDS = "0.2x";
    /** A calibration run: this share of the predicted saturation rate (near the knee, where the objective is decided). */
    static final double CALIBRATION_LOAD = 0.9;
    static final int CALIBRATION_REQUESTS = 200;
    /**
     * Before the first calibration run, one of this many requests that is not judged: a fresh JVM loads the client's and
     * the mock's classes and compiles their paths during its first seconds, which would charge the machine with the
     * demo's own start-up.
     */
    static final int WARMUP_CALIBRATION_REQUESTS = 150;
    static final int CALIBRATION_WARMUPS = 20;

    /** Fixed latencies in place of the cost model, or null: set from {@link #timing} when the demo starts. */
    private FixedTiming fixed;
    /** The seed of the next measured run: every run gets its own, so the server's prefix cache never helps it. */
    private long nextSeed;
    /** The time scale the measured runs ran at, once calibrated. */
    private double timeScale;

    @Override
    public Integer call() throws Exception {
        EarlyInterrupt.handOver(); // the demo is the run: an interrupt stops it as it always did, without a word
        long startNanos = System.nanoTime();
        applyQuick();
        double askedScale = askedTimeScale();
        ConfigException.check(runSeconds > 0 && runSeconds <= 3600, "--run-seconds must be in (0, 3600], got %s", runSeconds);
        ConfigException.check(numWarmups >= 0, "--num-warmups must be >= 0, got %d", numWarmups);
        ConfigException.check(sloTtftP99Ms > 0, "--slo-ttft-p99-ms must be > 0, got %s", sloTtftP99Ms);
        ConfigException.check(maxNoiseShare > 0 && maxNoiseShare <= 1, "--max-noise-share must be in (0, 1], got %s",
                maxNoiseShare);
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
                        + "Poisson arrivals; predicted saturation %.2f req/s (model time)%n", timingWords(d), PROMPT_TOKENS,
                MEAN_OUTPUT_TOKENS, MAX_TOKENS, saturation);

        List<DemoRow> rows = new ArrayList<>();
        List<SimulationResult> pairedRuns = new ArrayList<>();
        List<BenchResult> measuredRuns = new ArrayList<>();
        DemoReport.Stability stability;
        int extraRuns = 0;
        DemoCalibration.Choice calibration;
        DemoMeasurement measurement = null;
        try {
            DemoMeasurement[] held = {null};
            double budget = maxNoiseShare * sloTtftP99Ms;
            out.printf(Locale.ROOT, "calibrating: the client's TTFT error against the server's truth, %d requests at %.0f%% "
                    + "of saturation per time scale tried...%n", CALIBRATION_REQUESTS, 100 * CALIBRATION_LOAD);
            calibration = DemoCalibration.choose(s -> calibrate(held, s, saturation, budget), budget,
                    String.format(Locale.ROOT, "%s of the %s ms TTFT p99 objective", DemoWords.percent(maxNoiseShare),
                            DemoWords.ms(sloTtftP99Ms)),
                    Double.isNaN(askedScale) ? MAX_AUTO_SCALE : askedScale,
                    Double.isNaN(askedScale) ? MIN_AUTO_SCALE : askedScale);
            measurement = held[0];
            timeScale = measurement.timeScale();
            out.println(calibration.words());
            if (dashboard) {
                out.println("live dashboard: " + measurement.server().baseUrl() + "/dashboard");
            }
            out.printf(Locale.ROOT, "sweeping %s of saturation, %s model seconds each (+%d warmup requests; %s wall seconds "
                            + "each at %sx), then %s%n", loads, DemoWords.ms(runSeconds), numWarmups,
                    DemoWords.ms(runSeconds / timeScale), DemoCalibration.scale(timeScale), maxExtraRuns == 0
                            ? "no extra runs" : "up to " + DemoWords.count(maxExtraRuns, "extra run")
                            + " until the conclusions are stable");
            for (double fraction : loads) {
                measure(measurement, fraction * saturation, saturation, null, prediction, rows, pairedRuns, measuredRuns, out);
            }
            while (true) {
                stability = measuredReport(rows, saturation, prediction).stability(extraRuns, maxExtraRuns);
                if (stability.stable() || extraRuns >= maxExtraRuns || Double.isNaN(stability.nextRatePerS())) {
                    break;
                }
                extraRuns++;
                measure(measurement, stability.nextRatePerS(), saturation, stability.nextWhy(), prediction, rows,
                        pairedRuns, measuredRuns, out);
            }
        } finally {
            if (measurement != null) {
                measurement.close();
            }
        }
        ReplicatedSweep simulatedCurve = ReplicatedSweep.run(curveRates(rows, saturation), replications,
                (rate, replication) -> {
                    SimulatedRun run = simulateWithCapacity(rate, requestsAt(rate), curveSeed(rate, replication),
                            prediction.meanOutputTokens());
                    return DemoSide.simulated(run.result(), run.late());
                });
        DemoReport report = new DemoReport(rows, saturation, simulatedSaturation(saturation), timeScale, sloTtftP99Ms,
                prediction.description(), fixed != null, simulatedCurve, prediction.curve(), stability, extraRuns);
        report.print(out);
        DemoResult result = report.result().withClosedLoop(DemoClosedLoop.runAndPrint(prediction,
                n -> builder(Double.POSITIVE_INFINITY, n, seed), () -> deployment.engine(null, seed), out))
                .withCalibration(DemoResult.Calibration.of(calibration));
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
        long wall = Math.round((System.nanoTime() - startNanos) / 1e9);
        out.printf(Locale.ROOT, "The demo took %d min %02d s of wall time.%n", wall / 60, wall % 60);
        return 0;
    }

    /** {@code --time-scale}: NaN for auto, else the factor, in (0, 100]. */
    private double askedTimeScale() {
        if ("auto".equals(timeScaleOption)) {
            return Double.NaN;
        }
        double v;
        try {
            v = Double.parseDouble(timeScaleOption);
        } catch (NumberFormatException e) {
            throw new ConfigException("--time-scale must be auto or a number in (0, 100], got '" + timeScaleOption + "'");
        }
        ConfigException.check(v > 0 && v <= 100, "--time-scale must be auto or a number in (0, 100], got %s", v);
        return v;
    }

    /**
     * One calibration round: a mock at {@code scale} (the one before closed), {@value #CALIBRATION_REQUESTS} requests
     * near the knee, each with a seed of its own below the sweep's.
     */
    private DemoCalibration.Round calibrate(DemoMeasurement[] held, double scale, double saturation, double budget) {
        try {
            boolean first = held[0] == null;
            if (held[0] != null) {
                held[0].close();
                held[0] = null;
            }
            held[0] = DemoMeasurement.start(this::serverOptions, scale, budget);
            if (first) {
                held[0].calibrate(Workload.open(spec(CALIBRATION_LOAD * saturation * scale, WARMUP_CALIBRATION_REQUESTS,
                        seed - 1)), WARMUP_CALIBRATION_REQUESTS - 1);
            }
            return held[0].calibrate(Workload.open(spec(CALIBRATION_LOAD * saturation * scale,
                    CALIBRATION_REQUESTS + CALIBRATION_WARMUPS, seed - 2 - Math.round(1e3 * scale))), CALIBRATION_WARMUPS);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("demo: the calibration's mock failed: " + e.getMessage(), e);
        }
    }

    /** The mock's options but its port and time scale. */
    private ServerOptions.Builder serverOptions(double scale) {
        return ServerOptions.builder(deployment.deployment()).seed(seed).maxWaitingRequests(100_000)
                .schedulingPolicy(deployment.schedulingPolicy).fixedTiming(fixed).dashboard(dashboard);
    }

    /**
     * Measures one rate with a fresh seed (the client's per-request detail gives the capacity windows, the server's
     * truth those of a run the client flagged invalid), simulates the same requests and a long run at that rate, and
     * adds the row.
     */
    private void measure(DemoMeasurement measurement, double rate, double saturation, String why,
                         DemoPrediction prediction, List<DemoRow> rows, List<SimulationResult> pairedRuns,
                         List<BenchResult> measuredRuns, PrintStream out) throws IOException {
        long pointSeed = nextSeed++;
        out.printf(Locale.ROOT, "  rate %.2f req/s (%.0f%% of saturation)%s: measuring, simulating, predicting...%n",
                rate, 100 * rate / saturation, why == null ? "" : ", " + why);
        int requests = requestsAt(rate);
        DemoMeasurement.Run run = measurement.run(Workload.open(spec(rate * timeScale, requests + numWarmups, pointSeed)),
                numWarmups, metadata(pointSeed), prediction.meanOutputTokens());
        BenchResult measured = run.result();
        SimulatedRun simulated = simulateWithCapacity(rate, requests, pointSeed, prediction.meanOutputTokens());
        SimulationResult steady = simulate(rate, STEADY_RUN_REQUESTS, pointSeed, null);
        var truth = measured.keys().groundTruth();
        rows.add(new DemoRow(rate, rate / saturation, DemoSide.measured(measured.result(), timeScale, run.client()),
                DemoSide.simulated(simulated.result(), simulated.late()),
                prediction.at(rate), DemoSide.simulated(steady, LateServiceRate.Late.NONE),
                truth == null ? Double.NaN : truth.ttftAbsErrorMs().p99() * timeScale, measured.valid(),
                DemoInvalidReasons.inModelTime(measured, timeScale), why,
                DemoSide.serverTruth(run.truth())));
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
                        + "length (mean %.0f tokens, at most %d); arrivals are Poisson. Each rate sends for %s model "
                        + "seconds (+%d warmup requests). The mock ran at %sx the modelled GPU's speed, the scale the "
                        + "calibration chose (below); every number here is converted back to model time.",
                timingWords(deployment.deployment()), PROMPT_TOKENS, MEAN_OUTPUT_TOKENS, MAX_TOKENS,
                DemoWords.ms(runSeconds), numWarmups, DemoCalibration.scale(timeScale));
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
    record SimulatedRun(SimulationResult result, LateServiceRate.Late late) {
    }

    private SimulatedRun simulateWithCapacity(double rate, int requests, long workloadSeed, double meanOutputTokens) {
        try {
            Path detail = Files.createTempFile("infersim-demo-sim-", ".jsonl");
            try {
                SimulationResult result;
                try (RequestLogWriter writer = new RequestLogWriter(detail, false)) {
                    result = simulate(rate, requests, workloadSeed, writer);
                }
                return new SimulatedRun(result, LateServiceRate.Late.of(LateServiceRate.served(detail), meanOutputTokens));
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



}
