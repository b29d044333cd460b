package dev.infersim.demo;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.report.BenchResult;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.FixedTiming;
import dev.infersim.prediction.EnginePrediction;
import dev.infersim.prediction.FixedPrediction;
import dev.infersim.prediction.WorkloadMoments;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.result.ResultJson;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.sim.Replica;
import dev.infersim.sim.RoundRobinRouter;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import dev.infersim.workload.WorkloadSpecBuilder;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The demo: the same workload measured three ways. The mock server runs in-process on the engine model and the real
 * clock (sped up by the time scale); the benchmark client drives it over HTTP through a request-rate sweep and checks
 * itself against the server's ground truth; the simulator replays the same requests in virtual time; the queueing model
 * predicts them in closed form. One table shows where the three agree, and says why where they do not; the page draws
 * it. {@code infersim demo} (cli's {@code DemoCommand}) parses and checks the settings and runs this.
 */
public final class Demo {
    private static final int PROMPT_TOKENS = 512;
    private static final int MAX_TOKENS = 1024;
    private static final double MEAN_OUTPUT_TOKENS = 128;

    /**
     * What the demo runs, as checked by its command: the load fractions (sorted, distinct), the model seconds each rate
     * sends, the extra runs it may add, simulated replications per rate, warmups per rate, the time scale asked for (NaN
     * for auto), the share of the objective the client's error may take, the TTFT p99 objective, whether to serve the
     * dashboard, the workload seed, the page, and the JSON comparison (or null).
     */
    public record Settings(List<Double> loads, double runSeconds, int maxExtraRuns, int replications, int numWarmups,
                           double askedTimeScale, double maxNoiseShare, double sloTtftP99Ms, boolean dashboard, long seed,
                           Path html, Path saveResult) {
    }

    /** The engine of one run: the deployment's, timed by fixed latencies drawn from {@code seed} when given. */
    @FunctionalInterface
    public interface Engines {
        EngineCore engine(FixedTiming fixed, long seed);
    }

    /** The fastest and slowest time scales {@code --time-scale auto} may choose. */
    static final double MAX_AUTO_SCALE = 4;
    static final double MIN_AUTO_SCALE = 0.2;
    public static final String MAX_AUTO_SCALE_WORDS = "4x";
    public static final String MIN_AUTO_SCALE_WORDS = "0.2x";
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

    private final Deployment deployment;
    private final String schedulingPolicy;
    /** Fixed latencies in place of the cost model, or null. */
    private final FixedTiming fixed;
    private final Engines engines;
    private final String version;
    private final List<Double> loads;
    private final double runSeconds;
    private final int maxExtraRuns;
    private final int replications;
    private final int numWarmups;
    /** The time scale asked for, or NaN to calibrate one between {@link #MAX_AUTO_SCALE} and {@link #MIN_AUTO_SCALE}. */
    private final double askedScale;
    private final double maxNoiseShare;
    private final double sloTtftP99Ms;
    private final boolean dashboard;
    private final long seed;
    private final Path html;
    private final Path saveResult;
    /** The seed of the next measured run: every run gets its own, so the server's prefix cache never helps it. */
    private long nextSeed;
    /** The time scale the measured runs ran at, once calibrated. */
    private double timeScale;

    /**
     * @param deployment       the deployment every method models
     * @param schedulingPolicy the mock's scheduling policy, by name
     * @param fixed            fixed latencies in place of the cost model, or null
     * @param engines          the simulated runs' engines (the same deployment and policy)
     * @param version          the infersim version the measured runs' metadata carry
     */
    public Demo(Settings settings, Deployment deployment, String schedulingPolicy, FixedTiming fixed, Engines engines,
                String version) {
        this.deployment = deployment;
        this.schedulingPolicy = schedulingPolicy;
        this.fixed = fixed;
        this.engines = engines;
        this.version = version;
        this.loads = settings.loads();
        this.runSeconds = settings.runSeconds();
        this.maxExtraRuns = settings.maxExtraRuns();
        this.replications = settings.replications();
        this.numWarmups = settings.numWarmups();
        this.askedScale = settings.askedTimeScale();
        this.maxNoiseShare = settings.maxNoiseShare();
        this.sloTtftP99Ms = settings.sloTtftP99Ms();
        this.dashboard = settings.dashboard();
        this.seed = settings.seed();
        this.html = settings.html();
        this.saveResult = settings.saveResult();
    }

    /** Runs the demo, printing as it goes to {@code out}; writes the page and, when asked, the comparison. */
    public void run(PrintStream out) throws Exception {
        long startNanos = System.nanoTime();
        nextSeed = seed;
        Deployment d = deployment;
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
                n -> builder(Double.POSITIVE_INFINITY, n, seed), () -> engines.engine(null, seed), out))
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
        return ServerOptions.builder(deployment).seed(seed).maxWaitingRequests(100_000)
                .schedulingPolicy(schedulingPolicy).fixedTiming(fixed).dashboard(dashboard);
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
        SimulationResult steady = simulate(rate, DemoRow.STEADY_RUN_REQUESTS, pointSeed, null);
        var truth = measured.keys().groundTruth();
        rows.add(new DemoRow(rate, rate / saturation, DemoSide.measured(measured.result(), timeScale, run.client()),
                DemoSide.simulated(simulated.result(), simulated.late()),
                prediction.at(rate), DemoSide.simulated(steady, LateServiceRate.Late.NONE),
                truth == null ? Double.NaN : truth.ttftAbsErrorMs().p99() * timeScale, measured.valid(),
                DemoInvalidReasons.inModelTime(measured, timeScale), why,
                DemoSide.serverTruth(run.truth()), run.ttftModelMs()));
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
                timingWords(deployment), PROMPT_TOKENS, MEAN_OUTPUT_TOKENS, MAX_TOKENS,
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
        m.put("infersim_version", version);
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

    private SimulationResult simulate(double rate, int requests, long workloadSeed, RequestLogWriter detail) {
        EngineCore engine = engines.engine(fixed, workloadSeed);
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
        EngineCore engine = engines.engine(fixed, seed);
        SimulationResult r = new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(),
                SimulationOptions.defaults(), null).run(Workload.open(spec(2 * predicted, DemoRow.STEADY_RUN_REQUESTS, seed)));
        return r.stats().completed() / (r.durationNanos() / 1e9);
    }
}
