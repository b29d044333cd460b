package dev.infersim.cli;

import dev.infersim.result.RunInfo;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.infersim.bench.BenchConfig;
import dev.infersim.bench.BenchResult;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.bench.HtmlReport;
import dev.infersim.bench.LoadSweep;
import dev.infersim.engine.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.queueing.ContinuousBatchingModel;
import dev.infersim.queueing.UnstableQueueException;
import dev.infersim.server.MockServer;
import dev.infersim.server.OutputLengths;
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
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
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
                + "request-rate sweep; prints one table and writes an HTML report. Bundled defaults, about a minute.")
public final class DemoCommand implements Callable<Integer> {
    private static final int PROMPT_TOKENS = 512;
    private static final int MAX_TOKENS = 1024;
    private static final double MEAN_OUTPUT_TOKENS = 128;

    @Mixin
    DeploymentOptions deployment;

    @Option(names = "--loads", split = ",", defaultValue = "0.25,0.5,0.75,0.9",
            description = "Request rates as fractions of the predicted saturation rate (default: ${DEFAULT-VALUE}).")
    List<Double> loads;

    @Option(names = "--num-prompts", defaultValue = "200", description = "Measured requests per rate (default: ${DEFAULT-VALUE}).")
    int numPrompts;

    @Option(names = "--num-warmups", defaultValue = "20", description = "Unmeasured requests first, per rate (default: ${DEFAULT-VALUE}).")
    int numWarmups;

    @Option(names = "--time-scale", defaultValue = "2",
            description = "The mock runs this many times faster than the modelled GPU (default: ${DEFAULT-VALUE}).")
    double timeScale;

    @Option(names = "--seed", defaultValue = "0", description = "Workload seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--html", defaultValue = "infersim-demo.html", description = "HTML report (default: ${DEFAULT-VALUE}).")
    Path html;

    @Option(names = "--save-result", paramLabel = "FILE", description = "Also write the comparison as JSON.")
    Path saveResult;

    @Override
    public Integer call() throws Exception {
        EarlyInterrupt.handOver(); // the demo is the run: an interrupt stops it as it always did, without a word
        ConfigException.check(timeScale > 0 && timeScale <= 100, "--time-scale must be in (0, 100], got %s", timeScale);
        ConfigException.check(numPrompts >= 20, "--num-prompts must be >= 20, got %d", numPrompts);
        ConfigException.check(numWarmups >= 0, "--num-warmups must be >= 0, got %d", numWarmups);
        for (double f : loads) {
            ConfigException.check(f > 0 && f <= 3, "--loads: fractions must be in (0, 3], got %s", f);
        }
        Deployment d = deployment.deployment();
        PrintStream out = System.out;
        EnginePrediction prediction = new EnginePrediction(d, WorkloadMoments.of(Workload.open(spec(1, 50_000, seed)), 50_000));
        double saturation = prediction.server().saturationRatePerS();
        out.printf(Locale.ROOT, "infersim demo: %s on %s, random prompts of %d tokens, geometric outputs (mean %.0f, max %d), "
                        + "Poisson arrivals; mock at %.0fx real time%n", d.model().name(), d.gpu().name(), PROMPT_TOKENS,
                MEAN_OUTPUT_TOKENS, MAX_TOKENS, timeScale);
        out.printf(Locale.ROOT, "predicted saturation: %.2f req/s; sweeping %s of it, %d requests each (+%d warmup)%n",
                saturation, loads, numPrompts, numWarmups);

        List<Row> rows = new ArrayList<>();
        List<Map<String, Object>> measuredRuns = new ArrayList<>();
        List<LoadSweep.Point> points = new ArrayList<>();
        MockServer server = MockServer.start(ServerOptions.builder(d).port(0).timeScale(timeScale).seed(seed)
                        // the client's max_tokens is each request's EOS draw; the server must not stop earlier
                        .outputLengths(OutputLengths.parse("fixed:" + MAX_TOKENS)).maxWaitingRequests(100_000)
                        .schedulingPolicy(deployment.schedulingPolicy).build())
                .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        try (BenchmarkClient client = new BenchmarkClient(clientConfig(server))) {
            for (int i = 0; i < loads.size(); i++) {
                double fraction = loads.get(i);
                double rate = fraction * saturation;
                // a fresh seed per rate: the server's prefix cache must not remember the previous rate's prompts
                long pointSeed = seed + i;
                out.printf(Locale.ROOT, "  rate %.2f req/s (%.0f%% of saturation): measuring, simulating, predicting...%n",
                        rate, 100 * fraction);
                BenchResult measured = client.run(Workload.open(spec(rate * timeScale, numPrompts + numWarmups, pointSeed)),
                        numWarmups, 0, 0, metadata(pointSeed));
                SimulationResult simulated = simulate(rate, numPrompts, pointSeed);
                SimulationResult steady = simulate(rate, STEADY_RUN_REQUESTS, pointSeed);
                rows.add(new Row(rate, fraction, Side.measured(measured.fields(), timeScale), Side.simulated(simulated),
                        Side.predicted(prediction, rate), Side.simulated(steady), groundTruthP99(measured.fields()),
                        measured.valid()));
                measuredRuns.add(measured.fields());
                points.add(new LoadSweep.Point(rate * timeScale, measured.fields()));
            }
        } finally {
            server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        Map<String, Object> sweep = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, points, 0.9);
        Object knee = sweep.get("knee_load");
        DemoReport report = new DemoReport(rows, saturation, simulatedSaturation(saturation),
                knee instanceof Number n ? n.doubleValue() / timeScale : Double.NaN, timeScale);
        report.print(out);
        sweep.put("infersim_demo_comparison", report.toMap());
        HtmlReport.writeSweep(html, sweep, measuredRuns);
        out.println("HTML report written to " + html + " (measured runs; rates and latencies there are wall-clock, "
                + "i.e. at " + timeScale + "x)");
        if (saveResult != null) {
            try {
                new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(saveResult.toFile(), report.toMap());
            } catch (IOException e) {
                throw new ConfigException("--save-result: cannot write " + saveResult + ": " + e.getMessage(), e);
            }
            out.println("Comparison written to " + saveResult);
        }
        return 0;
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
        EngineCore engine = deployment.engine();
        return new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(),
                SimulationOptions.defaults().withWarmups(numWarmups), null)
                .run(Workload.open(spec(rate, requests + numWarmups, workloadSeed)));
    }

    /**
     * The simulated engine's capacity: completions per second of a long run offered twice the predicted saturation
     * rate, long enough that filling and draining the batch barely matter.
     */
    private double simulatedSaturation(double predicted) {
        EngineCore engine = deployment.engine();
        SimulationResult r = new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(),
                SimulationOptions.defaults(), null).run(Workload.open(spec(2 * predicted, STEADY_RUN_REQUESTS, seed)));
        return r.stats().completed() / (r.durationNanos() / 1e9);
    }

    private BenchConfig clientConfig(MockServer server) {
        return new BenchConfig(server.baseUrl(), "/v1/completions", server.options().servedModelName(), null, false,
                120_000, Math.round(5e6), GoodputSlo.NONE, List.of("ttft", "tpot", "itl", "e2el"), List.of(50.0, 99.0),
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
               double groundTruthP99Ms, boolean measuredValid) {
    }

    /** The numbers the table compares, in model time (milliseconds and per second of the modelled GPU). */
    record Side(double ttftP50Ms, double ttftP99Ms, double tpotP50Ms, double outputTokensPerS, double requestsPerS,
                boolean saturated) {

        static Side measured(Map<String, Object> f, double timeScale) {
            return new Side(num(f, "median_ttft_ms") * timeScale, num(f, "p99_ttft_ms") * timeScale,
                    num(f, "median_tpot_ms") * timeScale, num(f, "infersim_steady_output_throughput") / timeScale,
                    num(f, "infersim_steady_request_throughput") / timeScale, false);
        }

        static Side simulated(SimulationResult r) {
            Map<String, Object> f = r.report(new dev.infersim.result.RunInfo("", "infersim-sim", "m", "m", 1, 1, 1, 0,
                    List.of("ttft", "tpot"), List.of(50.0, 99.0))).fields();
            return new Side(num(f, "median_ttft_ms"), num(f, "p99_ttft_ms"), num(f, "median_tpot_ms"),
                    num(f, "infersim_steady_output_throughput"), num(f, "infersim_steady_request_throughput"),
                    r.saturation().saturated());
        }

        static Side predicted(EnginePrediction p, double rate) {
            try {
                ContinuousBatchingModel chain = p.at(rate);
                return new Side(1e3 * chain.ttftPercentileSeconds(0.5), 1e3 * chain.ttftPercentileSeconds(0.99),
                        1e3 * chain.meanTpotSeconds(),
                        rate * p.moments().meanOutputTokens(), rate, false);
            } catch (UnstableQueueException e) {
                double sat = p.server().saturationRatePerS();
                return new Side(Double.NaN, Double.NaN, Double.NaN, sat * p.moments().meanOutputTokens(), sat, true);
            }
        }

        private static double num(Map<String, Object> f, String key) {
            Object v = f.get(key);
            return v instanceof Number n ? n.doubleValue() : Double.NaN;
        }
    }

    static Map<String, Object> sideMap(Side s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("median_ttft_ms", s.ttftP50Ms());
        m.put("p99_ttft_ms", s.ttftP99Ms());
        m.put("median_tpot_ms", s.tpotP50Ms());
        m.put("steady_output_throughput", s.outputTokensPerS());
        m.put("steady_request_throughput", s.requestsPerS());
        m.put("saturated", s.saturated());
        return m;
    }
}
