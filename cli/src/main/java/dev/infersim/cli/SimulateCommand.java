package dev.infersim.cli;

import dev.infersim.bench.report.HtmlReport;
import dev.infersim.cli.options.AutoscaleOptions;
import dev.infersim.cli.options.ConfigFile;
import dev.infersim.cli.options.DeploymentOptions;
import dev.infersim.cli.options.DisaggregationOptions;
import dev.infersim.cli.options.LoraOptions;
import dev.infersim.cli.options.OptionGroup;
import dev.infersim.cli.options.OptionLimits;
import dev.infersim.cli.options.ReportOptions;
import dev.infersim.cli.options.TimingOptions;
import dev.infersim.cli.options.WorkloadOptions;
import dev.infersim.result.RunInfo;
import dev.infersim.result.VllmDetailArrays;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.StartupDelay;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.ReplicaLatency;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.result.RunInfo;
import dev.infersim.result.ServingReport;
import dev.infersim.result.VllmDetailArrays;
import dev.infersim.sim.Autoscaler;
import dev.infersim.sim.DisaggregatedFleet;
import dev.infersim.sim.DisaggregationPlanner;
import dev.infersim.sim.Fleet;
import dev.infersim.sim.Replica;
import dev.infersim.sim.ReplicaSeries;
import dev.infersim.sim.Router;
import dev.infersim.sim.Routers;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.sim.SimulatorKeys;
import dev.infersim.sim.SingleRequestLatency;
import dev.infersim.sim.TieBreak;
import dev.infersim.sim.Timeline;
import dev.infersim.workload.arrival.LoadPattern;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * {@code infersim simulate}: runs a {@code vllm bench serve}-style workload against the engine model in virtual time
 * and reports what the benchmark would have measured, in vLLM's console format and result JSON.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Simulate a vllm bench serve run against the engine model in virtual time; prints vLLM's summary "
                + "and writes vLLM's result JSON. With no flags: 1000 random prompts (1024 in / 128 out) at 10 req/s "
                + "on llama-3.1-8b / h100.")
public final class SimulateCommand implements Runnable {

    @Mixin
    WorkloadOptions workload;

    @Mixin
    ReportOptions reporting;

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--request-rate", paramLabel = "REQ_PER_S|inf",
            description = "Mean arrival rate, req/s, at most " + OptionLimits.MAX_RATE + ", or inf (default: 10, or the rate a --workload profile sets; a "
                    + "trace replays its own timestamps).")
    String requestRate;

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--max-concurrency", description = "Cap on requests in flight, at most " + OptionLimits.MAX_CONCURRENCY
            + "; with --request-rate inf, a closed loop of N users.")
    Integer maxConcurrency;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--replicas", defaultValue = "1",
            description = "Engine replicas behind the router; with --autoscaler, those serving at time 0 (default: ${DEFAULT-VALUE}).")
    int replicas;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--router", defaultValue = "round-robin", description = "round-robin, least-outstanding-requests, least-kv-usage, power-of-two-choices (seeded by --seed) "
            + "prefix-affinity or lora-affinity (default: ${DEFAULT-VALUE}).")
    String router;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--router-tie-break", defaultValue = "round-robin", paramLabel = "round-robin|lowest-index",
            description = "How routers choose among equally scored replicas: round-robin (as nginx least_conn and "
                    + "HAProxy leastconn) or lowest-index (as Vidur) (default: ${DEFAULT-VALUE}).")
    String routerTieBreak;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--autoscaler", paramLabel = "NAME",
            description = "Size the fleet with an autoscaler: hpa (the Kubernetes HPA algorithm). Off by default.")
    String autoscalerName;

    @Mixin
    AutoscaleOptions autoscale;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--startup-delay", defaultValue = "auto", paramLabel = "auto|S",
            description = "Cold start of each replica the autoscaler adds: auto (weights over --load-bandwidth-gbps "
                    + "plus CUDA-graph capture) or seconds (default: ${DEFAULT-VALUE}).")
    String startupDelay;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--load-bandwidth-gbps", defaultValue = "" + StartupDelay.DEFAULT_LOAD_BANDWIDTH_GBPS,
            description = "GB/s a starting replica reads its weights at, for --startup-delay auto, and a LoRA adapter missing "
                    + "from host memory is read at (default: ${DEFAULT-VALUE}).")
    double loadBandwidthGbps;

    @OptionGroup.In(OptionGroup.FLEET)
    @Option(names = "--metrics-lag", defaultValue = "15", paramLabel = "S",
            description = "Age of the metrics each autoscaler sync reads (a scrape interval) (default: ${DEFAULT-VALUE}).")
    double metricsLagS;

    @OptionGroup.In(OptionGroup.OUTPUT)
    @Option(names = "--dollars-per-gpu-hour", paramLabel = "USD",
            description = "Price of one GPU-hour, for infersim_cost_dollars (GPU-seconds are always reported).")
    Double dollarsPerGpuHour;

    @Mixin
    DeploymentOptions deployment;

    @OptionGroup.In(OptionGroup.OUTPUT)
    @Option(names = "--html", paramLabel = "FILE",
            description = "Write a self-contained HTML report: replicas, latency and SLO attainment over time on one time axis.")
    Path html;

    @OptionGroup.In(OptionGroup.OBSERVE)
    @Option(names = "--dashboard", description = "After the run, replay it on the live dashboard's page at "
            + "http://127.0.0.1:PORT/dashboard (each viewer from the start) until interrupted.")
    boolean dashboard;

    @OptionGroup.In(OptionGroup.OBSERVE)
    @Option(names = "--dashboard-port", defaultValue = "8080", description = "Port of the replay (default: ${DEFAULT-VALUE}).")
    int dashboardPort;

    @OptionGroup.In(OptionGroup.WORKLOAD)
    @Option(names = "--seeds", defaultValue = "1", paramLabel = "N",
            description = "Run N independent replications (workload and latency seeds --seed to --seed + N - 1) and "
                    + "report each metric's mean over them with its 95%% interval (Student's t), and each seed's mean "
                    + "TTFT: how far one seed may move a result (default: ${DEFAULT-VALUE}: one run, reported in full).")
    int seeds;

    @OptionGroup.In(OptionGroup.OBSERVE)
    @Option(names = "--dashboard-speed", paramLabel = "X",
            description = "Model seconds per wall second of the replay (default: the run's length over 60 s, at least 1).")
    Double dashboardSpeed;

    @Mixin
    TimingOptions timing;

    @Mixin
    LoraOptions lora;

    @Mixin
    DisaggregationOptions disaggregation;

    @OptionGroup.In(OptionGroup.CONFIG)
    @Option(names = "--config", paramLabel = "FILE", description = "YAML file of these flags (keys without '--'); command-line flags win.")
    Path config;

    @Spec
    CommandSpec command;

    @Override
    public void run() {
        if (config == null) {
            simulate();
            return;
        }
        ConfigFile file = ConfigFile.read(config, command);
        SimulateCommand merged = file.parse(new SimulateCommand());
        try {
            merged.simulate();
        } catch (RuntimeException e) {
            throw file.attribute(e);
        }
    }

    private void simulate() {
        ConfigException.check(replicas >= 1, "--replicas must be >= 1, got %d", replicas);
        ConfigException.check(dashboardPort >= 0 && dashboardPort <= 65535, "--dashboard-port must be in 0..65535, got %d",
                dashboardPort);
        ConfigException.check(dashboardSpeed == null || dashboardSpeed > 0, "--dashboard-speed must be > 0, got %s",
                dashboardSpeed);
        ConfigException.check(seeds >= 1 && seeds <= 1000, "--seeds must be in [1, 1000], got %d", seeds);
        ConfigException.check(seeds == 1 || !(reporting.saveResult || reporting.saveDetailed || html != null || dashboard
                        || disaggregation.plan), "--seeds %d reports means over runs; --save-result, --save-detailed, "
                + "--html, --dashboard and --plan-disaggregation describe one run: drop them or --seeds", seeds);
        reporting.validate();
        reporting.createResultDir();
        if (html != null) {
            ReportOptions.writableFile("--html", html);
        }
        WorkloadSpec spec = workload.specAtRateOr(requestRate, 10, maxConcurrency, reporting.numWarmups);
        Workload requests = Workload.open(spec);
        // Warmups come on top of --num-prompts, except where a trace's length caps the stream.
        ConfigException.check(requests.size() > reporting.numWarmups,
                "--num-warmups %d leaves none of the %d requests to measure", reporting.numWarmups, requests.size());
        Deployment d = lora.apply(deployment.deployment(), loadBandwidthGbps);
        boolean split = disaggregation.split();
        ConfigException.check(!(split || disaggregation.plan) || autoscalerName == null,
                "--autoscaler sizes an aggregated fleet; it cannot be combined with --prefill-replicas or --plan-disaggregation");
        ConfigException.check(!split || !command.commandLine().getParseResult().hasMatchedOption("--replicas"),
                "--replicas sizes an aggregated fleet; with --prefill-replicas the pools are --prefill-replicas and --decode-replicas");
        ConfigException.check(!(split || disaggregation.plan) || timing.fixedTiming() == null,
                "prefill/decode disaggregation needs the engine's cost model, not --timing fixed");
        ConfigException.check(dollarsPerGpuHour == null || (dollarsPerGpuHour >= 0 && Double.isFinite(dollarsPerGpuHour)),
                "--dollars-per-gpu-hour must be >= 0, got %s", dollarsPerGpuHour);
        SingleRequestLatency[] alone = new SingleRequestLatency[1]; // measured only for objectives given as multiples
        GoodputSlo slo = reporting.slo(() -> (alone[0] = SingleRequestLatency.ofMeanRequest(
                deployment.engine(d, timing.fixedTiming(), workload.seed), requests)).asObjectives());
        SimulationOptions options = SimulationOptions.defaults().withWarmups(reporting.numWarmups)
                .withWarmupDurationNanos(Math.round(reporting.warmupDurationS * 1e9)).withSlo(slo)
                .withDollarsPerGpuHour(dollarsPerGpuHour == null ? Double.NaN : dollarsPerGpuHour);
        if (disaggregation.plan) {
            plan(d, options, alone[0], System.out);
            return;
        }
        if (seeds > 1) {
            System.out.println(KvCapacity.of(d).describe());
            printObjectives(alone[0], slo, System.out);
            SeedReplications.run(seeds, workload.seed, k -> {
                workload.seed = k;
                WorkloadSpec at = workload.specAtRateOr(requestRate, 10, maxConcurrency, reporting.numWarmups);
                return (split ? new Simulation(disaggregatedFleet(d), options, null)
                        : new Simulation(fleet(d, timing.fixedTiming()), router(router), options, null))
                        .run(Workload.open(at));
            }, System.out);
            return;
        }
        Fleet fleet = split ? null : fleet(d, timing.fixedTiming());
        LoadPattern load = spec.load();
        RunInfo info = new RunInfo(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")), "infersim",
                d.model().hfId(), d.model().hfId(), requests.size() - Math.min(reporting.numWarmups, requests.size()),
                load.requestRatePerS(), load.burstiness(), load.maxConcurrency(), reporting.metrics(),
                reporting.percentiles(), load.rampUp());
        PrintStream out = System.out;
        out.println(KvCapacity.of(d).describe());
        printObjectives(alone[0], slo, out);
        String file = reporting.resultFilename != null ? reporting.resultFilename : info.defaultResultFileName();
        Path detailFile = reporting.saveDetailed ? reporting.resultDir.resolve(file.replaceFirst("\\.json$", "") + ".jsonl")
                : dashboard ? ReplayServer.temporaryDetail() : null;
        RequestLogWriter detail = detailFile == null ? null : new RequestLogWriter(detailFile, true);
        Simulation simulation = split ? new Simulation(disaggregatedFleet(d), options, detail)
                : new Simulation(fleet, router(router), options, detail);
        // An interrupt stops the arrivals; the run then ends as usual and writes what it simulated before the JVM exits.
        try (InterruptGuard guard = new InterruptGuard(simulation::stop)) {
            SimulationResult result;
            try (detail) {
                result = simulation.run(requests);
            }
            String detailFailure = detail == null ? null : detail.failure();
            OutputWrites writes = new OutputWrites();
            writes.failed(detailFailure);
            report(result, info, file, reporting.saveDetailed && detailFailure == null ? detailFile : null, writes, out);
            // the run is reported and every file it could be written; those it could not end it with one line, exit 2
            writes.finish();
            ConfigException.check(result.stopped() || result.stats().completed() + result.stats().failed() > 0,
                    "--warmup-duration %s s covers the whole run: no request was measured", reporting.warmupDurationS);
            if (dashboard) {
                Timeline t = result.timeline();
                double seconds = t.size() == 0 ? 0 : t.timeNanos(t.size() - 1) / 1e9;
                double speed = dashboardSpeed != null ? dashboardSpeed : Math.max(1, seconds / 60);
                ReplayServer.serveUntilInterrupted(new SimulationReplay(result, detailFile, speed),
                        dashboardPort, out);
            }
        }
    }

    private Fleet fleet(Deployment d, FixedTiming fixed) {
        long[] nextSeed = {workload.seed};
        Supplier<EngineCore> engines = () -> deployment.engine(d, fixed, nextSeed[0]++); // each replica its own latency draws
        Replica[] initial = new Replica[replicas];
        for (int i = 0; i < replicas; i++) {
            initial[i] = new Replica(i, engines.get());
        }
        if (autoscalerName == null) {
            return Fleet.fixed(initial);
        }
        Autoscaler autoscaler = autoscale.autoscaler(autoscalerName);
        ConfigException.check(metricsLagS >= 0 && Double.isFinite(metricsLagS), "--metrics-lag must be >= 0 s, got %s", metricsLagS);
        return new Fleet(initial, engines, autoscaler, StartupDelay.parse(startupDelay, d, loadBandwidthGbps),
                AutoscaleOptions.nanos(metricsLagS));
    }

    /** A router by name, with --seed and --router-tie-break. */
    private Router router(String name) {
        return Routers.byName(name, workload.seed, TieBreak.parse("--router-tie-break", routerTieBreak));
    }

    private DisaggregatedFleet disaggregatedFleet(Deployment d) {
        int p = disaggregation.prefillReplicas;
        int n = disaggregation.decodeReplicas;
        ConfigException.check(p >= 1, "--prefill-replicas must be >= 1, got %d", p);
        ConfigException.check(n >= 1, "--decode-replicas must be >= 1, got %d", n);
        Replica[] prefill = new Replica[p];
        Replica[] decode = new Replica[n];
        for (int i = 0; i < p + n; i++) {
            Replica r = new Replica(i, deployment.engine(d, null, 0));
            if (i < p) {
                prefill[i] = r;
            } else {
                decode[i - p] = r;
            }
        }
        return new DisaggregatedFleet(prefill, router(disaggregation.prefillRouter(router)), decode,
                router(disaggregation.decodeRouter(router)), disaggregation.link.link());
    }

    /** --plan-disaggregation: every split of --replicas against the same replicas aggregated, as a table. */
    private void plan(Deployment d, SimulationOptions options, SingleRequestLatency alone, PrintStream out) {
        ConfigException.check(requestRate != null && !requestRate.equals("inf"),
                "--plan-disaggregation needs --request-rate (a finite rate to start the search from)");
        double rate = WorkloadOptions.parseRate("--request-rate", requestRate);
        DisaggregationPlanner planner = new DisaggregationPlanner(replicas, () -> deployment.engine(d, null, 0),
                () -> router(router), () -> router(disaggregation.prefillRouter(router)),
                () -> router(disaggregation.decodeRouter(router)), disaggregation.link.link(), options,
                disaggregation.sloAttainment);
        out.println(KvCapacity.of(d).describe());
        printObjectives(alone, options.slo(), out);
        WorkloadSpec base = workload.spec(rate, maxConcurrency, reporting.numWarmups);
        ConfigException.check(!base.datasetName().equals(WorkloadSpec.TRACE) && base.load().rampUp() == null,
                "--plan-disaggregation varies the request rate; a trace or a ramp sets its own");
        // every run sends for as long as the workload does at its own rate, so a fast one is no short burst
        java.util.List<DisaggregationPlanner.Outcome> outcomes = planner.plan(rate, r -> Workload.open(
                workload.spec(r, maxConcurrency, reporting.numWarmups).withNumPrompts(Math.max(base.numPrompts(),
                        Math.round(base.numPrompts() * r / rate)))));
        DisaggregationPlanReport.print(outcomes, d, options, disaggregation.sloAttainment, rate, out);
    }

    /** Where --goodput gave multiples: the latencies of one request alone they multiply, and the objectives in ms. */
    private static void printObjectives(SingleRequestLatency alone, GoodputSlo slo, PrintStream out) {
        if (alone != null) {
            out.printf(Locale.ROOT, "One request alone (%d prompt, %d output tokens): TTFT %.2f ms, TPOT %.2f ms, "
                            + "E2EL %.1f ms; so --goodput is %s%n", alone.promptTokens(), alone.outputTokens(), alone.ttftMs(),
                    alone.tpotMs(), alone.e2elMs(), DisaggregationPlanReport.describe(slo));
        }
    }

    private void report(SimulationResult result, RunInfo info, String file, Path detailFile, OutputWrites writes,
                        PrintStream out) {
        ServingReport<SimulatorKeys> report = result.report(info);
        if (detailFile != null) {
            report = report.withProducer(report.producer().withDetailedFile(detailFile.toString())); // where compare finds it
        }
        report.printSummary(out);
        if (result.replicas().length > 1) {
            StringBuilder line = new StringBuilder();
            for (Replica r : result.replicas()) {
                ReplicaLatency s = report.producer().perReplica().get(Integer.toString(r.id()));
                line.append(line.length() == 0 ? "" : ", ").append(r.id()).append(": ").append(s.requests());
                if (s.meanTtftMs() != null) {
                    line.append(String.format(Locale.ROOT, " (TTFT %.1f ms, queue %.1f ms)", s.meanTtftMs(),
                            s.meanQueueMs()));
                }
            }
            out.printf(Locale.ROOT, "%-40s %s%n", "Requests per replica (mean):", line);
        }
        out.println(result.saturation().saturated()
                ? "Saturated: yes (" + result.saturation().reason() + ")"
                : "Saturated: no (" + result.saturation().reason() + ")");
        out.println(SeedReplications.littlesLaw(result));
        if (autoscalerName != null) {
            ReplicaSeries series = result.replicaSeries();
            int peak = 0;
            for (int i = 0; i < series.size(); i++) {
                peak = Math.max(peak, series.desired(i));
            }
            out.printf(Locale.ROOT, "Autoscaler %s: %d replica changes, peak %d desired, %d at the end%n", autoscalerName,
                    series.size() - 1, peak, series.desired(series.size() - 1));
        }
        if (result.disaggregation() != null) {
            out.println(DisaggregationPlanReport.pools(result));
        }
        out.printf(Locale.ROOT, "GPU-seconds: %.1f%s%n", result.gpuSeconds(), Double.isNaN(result.dollarsPerGpuHour()) ? ""
                : String.format(Locale.ROOT, " ($%.4f at $%s per GPU-hour)", result.gpuSeconds() / 3600 * result.dollarsPerGpuHour(),
                result.dollarsPerGpuHour()));
        if (result.stopped()) {
            out.println("Interrupted: the requests sent before the interrupt were simulated to completion and are reported");
        }
        ServingReport<SimulatorKeys> written = report;
        if (reporting.saveResult) {
            Path path = reporting.resultDir.resolve(file);
            if (writes.attempt(() -> {
                if (detailFile == null) {
                    written.write(path);
                } else {
                    written.write(path, VllmDetailArrays.of(detailFile));
                }
            })) {
                out.println("Result written to " + path);
            }
        }
        if (detailFile != null) {
            out.println("Per-request detail written to " + detailFile);
        }
        if (html != null && writes.attempt(() -> {
            try {
                HtmlReport.writeRun(html, written.result());
            } catch (ConfigException e) {
                throw new ConfigException("--html: " + e.getMessage(), e);
            }
        })) {
            out.println("HTML report written to " + html);
        }
        out.flush();
    }
}
