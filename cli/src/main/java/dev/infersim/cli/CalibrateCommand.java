package dev.infersim.cli;

import dev.infersim.cli.options.DeploymentOptions;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import dev.infersim.result.OutputFile;
import dev.infersim.engine.calibration.Calibrator;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.profile.GpuProfile;
import dev.infersim.engine.calibration.MeasurementFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;

/**
 * {@code infersim calibrate}: fits one GPU profile's efficiency factors and overheads to step times measured on that
 * GPU (by calibration/infersim_profile_gpu.py or a real engine), writes the fitted profile and prints the error of every
 * measurement, fitted and held out.
 */
@Command(name = "calibrate", mixinStandardHelpOptions = true,
        description = {"Fit a GPU profile to measured step times and print the error of every measurement.",
                "CSV columns: phase,batch,context_tokens,new_tokens,measured_ms, optionally model,dtype,tp "
                        + "(else --model, --dtype, --tensor-parallel-size); '# key: value' header lines "
                        + "(calibration/infersim_profile_gpu.py writes them)."})
public final class CalibrateCommand implements Runnable {

    @Mixin
    DeploymentOptions deployment;

    @Option(names = "--measurements", paramLabel = "FILE.csv",
            description = "Measured step times to fit (repeatable): the kit's CSV, or `infersim profile --format csv` plus "
                    + "measured_ms. Without any, --check files are only replayed through --gpu.")
    List<Path> measurements;

    @Option(names = "--check", paramLabel = "FILE.csv",
            description = "Measurements to check the fitted profile on without fitting to them (repeatable).")
    List<Path> checks;

    @Option(names = "--fit-models", split = ",", paramLabel = "NAME,...",
            description = "Fit only on these models' rows; the others are held out and only checked (default: all rows).")
    List<String> fitModels;

    @Option(names = "--hold", split = ",", paramLabel = "FACTOR,...",
            description = "Factors to keep at the starting profile's values (YAML names, e.g. step_overhead_us).")
    List<String> hold;

    @Option(names = "--fit-factors", split = ",", paramLabel = "FACTOR,...",
            description = "Fit only these factors and hold all others (default: every factor the data can see).")
    List<String> fitFactors;

    @Option(names = "--ceilings", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Set and hold compute_efficiency_max and fp8_compute_efficiency_max at the measured GEMM "
                    + "ceilings over the datasheet peaks, where the CSV headers give them (default: on).")
    boolean ceilings;

    @Option(names = "--output", paramLabel = "FILE.yaml", description = "Where to write the fitted GPU profile (required with --measurements).")
    Path output;

    @Option(names = "--quiet", description = "Print only the per-model summary, not every measurement.")
    boolean quiet;

    @Override
    public void run() {
        Deployment defaults = deployment.deployment();
        ConfigException.check(defaults.engine().hostTime().isNone(), "--engine %s: calibrate fits a GPU profile to kernel "
                + "timings, which hold no engine's host time; leave --engine at vllm-v1", defaults.engine());
        GpuProfile start = defaults.gpu();
        List<Calibrator.Measurement> all = new ArrayList<>();
        List<Calibrator.Measurement> heldOut = new ArrayList<>();
        for (Path file : checks == null ? List.<Path>of() : checks) {
            heldOut.addAll(MeasurementFile.read(file, "--check", defaults).rows());
        }
        if (measurements == null) {
            ConfigException.check(!heldOut.isEmpty(), "--measurements: give measurements to fit, or --check files to replay");
            report(System.out, "check", heldOut, start, start);
            return;
        }
        ConfigException.check(output != null, "--output: required with --measurements");
        Map<String, List<Double>> ceilingValues = new LinkedHashMap<>();
        for (Path file : measurements) {
            MeasurementFile.Contents c = MeasurementFile.read(file, "--measurements", defaults);
            all.addAll(c.rows());
            for (String name : List.of("bf16_gemm_tflops", "fp8_gemm_tflops")) {
                OptionalDouble v = c.ceiling(name);
                if (v.isPresent()) {
                    ceilingValues.computeIfAbsent(name, k -> new ArrayList<>()).add(v.getAsDouble());
                }
            }
        }
        Set<String> held = new LinkedHashSet<>(factors("--hold", hold));
        if (fitFactors != null) {
            factors("--fit-factors", fitFactors);
            GpuProfile.FACTORS.stream().filter(f -> !fitFactors.contains(f)).forEach(held::add);
        }
        if (ceilings) {
            start = withCeilings(start, ceilingValues, held);
        }
        Set<String> fitSet = fitModels == null ? null : Set.copyOf(fitModels);
        List<Calibrator.Measurement> fit = new ArrayList<>();
        for (Calibrator.Measurement m : all) {
            (fitSet == null || fitSet.contains(m.deployment().model().name()) ? fit : heldOut).add(m);
        }
        ConfigException.check(!fit.isEmpty(), "--fit-models: no measurement of %s", fitModels);
        Calibrator.Result r = Calibrator.fit(start, fit, held);
        write(r, fit.size());
        PrintStream out = System.out;
        out.printf(Locale.ROOT, "fitted %s to %d measurements (%d held out) in %d iterations: %s%n", start.name(), fit.size(),
                heldOut.size(), r.iterations(), String.join(", ", r.fittedFactors()));
        report(out, "fit", fit, start, r.fitted());
        if (!heldOut.isEmpty()) {
            report(out, "held out", heldOut, start, r.fitted());
        }
        out.println("wrote " + output + " (use it with --gpu " + output + ")");
    }

    private static List<String> factors(String flag, List<String> names) {
        for (String f : names == null ? List.<String>of() : names) {
            ConfigException.check(GpuProfile.FACTORS.contains(f), "%s: unknown factor '%s'; factors: %s", flag, f,
                    String.join(", ", GpuProfile.FACTORS));
        }
        return names == null ? List.of() : names;
    }

    private GpuProfile withCeilings(GpuProfile g, Map<String, List<Double>> values, Set<String> held) {
        double[] f = g.factors();
        if (values.containsKey("bf16_gemm_tflops")) {
            f[GpuProfile.FACTORS.indexOf("compute_efficiency_max")] = Math.min(1, mean(values.get("bf16_gemm_tflops")) / g.bf16Tflops());
            held.add("compute_efficiency_max");
        }
        if (values.containsKey("fp8_gemm_tflops") && g.fp8Tflops() > 0) {
            f[GpuProfile.FACTORS.indexOf("fp8_compute_efficiency_max")] = Math.min(1, mean(values.get("fp8_gemm_tflops")) / g.fp8Tflops());
            held.add("fp8_compute_efficiency_max");
        }
        return g.withFactors(f);
    }

    private static double mean(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    }

    private void report(PrintStream out, String title, List<Calibrator.Measurement> data, GpuProfile start, GpuProfile fitted) {
        double[] predicted = Calibrator.predictedMs(fitted, data);
        double[] before = Calibrator.errors(start, data);
        double[] after = Calibrator.errors(fitted, data);
        if (!quiet) {
            out.printf(Locale.ROOT, "%n%s: model,dtype,tp,phase,batch,context_tokens,new_tokens,measured_ms,predicted_ms,error%n", title);
            for (int i = 0; i < data.size(); i++) {
                Calibrator.Measurement m = data.get(i);
                Deployment d = m.deployment();
                out.printf(Locale.ROOT, "%s,%s,%d,%s,%d,%d,%d,%.3f,%.3f,%+.1f%%%n", d.model().name(),
                        d.dtype().name().toLowerCase(Locale.ROOT), d.tensorParallelSize(), m.phase(), m.batch(),
                        m.contextTokens(), m.newTokens(), m.measuredMs(), predicted[i], 100 * after[i]);
            }
        }
        boolean refitted = start != fitted;
        out.printf(Locale.ROOT, "%n%-28s %5s  %-21s%s%n", title, "n", refitted ? "before: median / max" : "median / max",
                refitted ? "  after: median / max" : "");
        Map<String, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < data.size(); i++) {
            groups.computeIfAbsent(data.get(i).group(), k -> new ArrayList<>()).add(i);
        }
        groups.put("all", null);
        for (Map.Entry<String, List<Integer>> g : groups.entrySet()) {
            double[] b = pick(before, g.getValue());
            double[] a = pick(after, g.getValue());
            out.printf(Locale.ROOT, "%-28s %5d  %7.1f%% / %7.1f%%", g.getKey(), a.length, 100 * Calibrator.medianAbs(b),
                    100 * Calibrator.maxAbs(b));
            out.printf(Locale.ROOT, refitted ? "    %7.1f%% / %7.1f%%%n" : "%n", 100 * Calibrator.medianAbs(a), 100 * Calibrator.maxAbs(a));
        }
    }

    private static double[] pick(double[] v, List<Integer> indices) {
        return indices == null ? v : indices.stream().mapToDouble(i -> v[i]).toArray();
    }

    private void write(Calibrator.Result r, int n) {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));
        StringBuilder files = new StringBuilder();
        for (Path p : measurements) {
            files.append(files.length() == 0 ? "" : ", ").append(p.getFileName());
        }
        String header = String.format(Locale.ROOT, "# %s calibrated by `infersim calibrate` on %d measurements from %s.%n"
                        + "# Relative step-time error of the fit: median %.1f%%, max %.1f%%.%n",
                r.fitted().name(), n, files, 100 * Calibrator.medianAbs(r.errorsAfter()), 100 * Calibrator.maxAbs(r.errorsAfter()));
        try {
            OutputFile.writeString(output, header + yaml.writeValueAsString(r.fitted()));
        } catch (IOException e) {
            throw new ConfigException("--output: cannot write " + output + ": " + e.getMessage(), e);
        } catch (ConfigException e) {
            throw new ConfigException("--output: " + e.getMessage(), e);
        }
    }
}
