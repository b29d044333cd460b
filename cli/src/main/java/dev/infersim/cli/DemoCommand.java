package dev.infersim.cli;

import dev.infersim.common.ConfigException;
import dev.infersim.workload.Workload;
import dev.infersim.cli.options.DeploymentOptions;
import dev.infersim.cli.options.OptionLimits;
import dev.infersim.cli.options.TimingOptions;
import dev.infersim.demo.Demo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code infersim demo}: its flags, checked with one-line errors, and {@code --quick}; the demo itself (the same workload
 * measured, simulated and predicted over a request-rate sweep, its table and its page) is {@link Demo}, in the demo
 * module.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Measure (mock server + benchmark client), simulate and predict one workload side by side over a "
                + "request-rate sweep past the knee; prints one table and writes an HTML page. How long it takes depends on "
                + "the time scale its calibration chooses: the wall time is printed at the end.")
public final class DemoCommand implements Callable<Integer> {
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
                    + "in short calibration runs, the fastest scale from " + Demo.MAX_AUTO_SCALE_WORDS + " down to " + Demo.MIN_AUTO_SCALE_WORDS
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

    @Override
    public Integer call() throws Exception {
        EarlyInterrupt.handOver(); // the demo is the run: an interrupt stops it as it always did, without a word
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
        new Demo(new Demo.Settings(loads, runSeconds, maxExtraRuns, replications, numWarmups, askedScale, maxNoiseShare,
                sloTtftP99Ms, dashboard, seed, html, saveResult), deployment.deployment(), deployment.schedulingPolicy,
                timing.fixedTiming(), deployment::engine, Version.current()).run(System.out);
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
}
