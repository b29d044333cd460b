package dev.infersim.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import dev.infersim.engine.Calibrator;
import dev.infersim.engine.ConfigException;
import dev.infersim.engine.Deployment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code infersim calibrate}: fits a GPU profile's efficiency factors and overheads to step times measured on a real
 * engine and writes a profile that reproduces them.
 */
@Command(name = "calibrate", mixinStandardHelpOptions = true,
        description = "Fit a GPU profile to measured step times (CSV: phase,batch,context_tokens,new_tokens[,step_ms],measured_ms).")
public final class CalibrateCommand implements Runnable {

    @Mixin
    DeploymentOptions deployment;

    @Option(names = "--measurements", required = true, paramLabel = "FILE.csv",
            description = "Measured step times: the columns of `infersim profile --format csv` plus measured_ms.")
    Path measurements;

    @Option(names = "--output", required = true, paramLabel = "FILE.yaml", description = "Where to write the fitted GPU profile.")
    Path output;

    @Override
    public void run() {
        Deployment d = deployment.deployment();
        List<Calibrator.Measurement> data = read(measurements);
        Calibrator.Result r = Calibrator.fit(d, data);
        write(r, d);
        System.out.printf(Locale.ROOT, "fitted %s to %d measurements of %s in %d iterations%n", d.gpu().name(), data.size(),
                d.model().name(), r.iterations());
        System.out.printf(Locale.ROOT, "relative error before: rms %.1f%%, max %.1f%%%n", 100 * r.rmsErrorBefore(), 100 * r.maxErrorBefore());
        System.out.printf(Locale.ROOT, "relative error after:  rms %.1f%%, max %.1f%%%n", 100 * r.rmsErrorAfter(), 100 * r.maxErrorAfter());
        System.out.println("wrote " + output + " (use it with --gpu " + output + ")");
    }

    static List<Calibrator.Measurement> read(Path file) {
        ConfigException.check(Files.isRegularFile(file), "--measurements: file %s does not exist", file);
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new ConfigException("--measurements: cannot read " + file + ": " + e.getMessage(), e);
        }
        ConfigException.check(!lines.isEmpty(), "--measurements: %s is empty", file);
        List<String> header = Arrays.asList(lines.get(0).trim().split("\\s*,\\s*"));
        int phase = column(file, header, "phase");
        int batch = column(file, header, "batch");
        int context = column(file, header, "context_tokens");
        int tokens = column(file, header, "new_tokens");
        int measured = column(file, header, "measured_ms");
        List<Calibrator.Measurement> data = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s*,\\s*");
            try {
                ConfigException.check(f.length == header.size(), "expected %d columns, got %d", header.size(), f.length);
                StepTimes.Row row = new StepTimes.Row(f[phase], Integer.parseInt(f[batch]), Integer.parseInt(f[context]),
                        Integer.parseInt(f[tokens]), 0);
                ConfigException.check(row.phase().equals("prefill") || row.phase().equals("decode"),
                        "phase must be prefill or decode, got '%s'", row.phase());
                ConfigException.check(row.batch() >= 1 && row.newTokens() >= 1 && row.contextTokens() >= 0,
                        "batch and new_tokens must be >= 1 and context_tokens >= 0");
                data.add(new Calibrator.Measurement(row.shape(), Double.parseDouble(f[measured])));
            } catch (NumberFormatException | ConfigException e) {
                throw new ConfigException(String.format("--measurements: %s:%d: %s", file, i + 1, e.getMessage()), e);
            }
        }
        return data;
    }

    private static int column(Path file, List<String> header, String name) {
        int i = header.indexOf(name);
        ConfigException.check(i >= 0, "--measurements: %s:1: missing column '%s' (header must include "
                + "phase,batch,context_tokens,new_tokens,measured_ms)", file, name);
        return i;
    }

    private void write(Calibrator.Result r, Deployment d) {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));
        String header = String.format(Locale.ROOT, "# %s calibrated by `infersim calibrate` for %s (tp %d, %s) from %s.%n"
                        + "# Relative step-time error: rms %.1f%% -> %.1f%%, max %.1f%% -> %.1f%%.%n",
                d.gpu().name(), d.model().name(), d.tensorParallelSize(), d.dtype(), measurements.getFileName(),
                100 * r.rmsErrorBefore(), 100 * r.rmsErrorAfter(), 100 * r.maxErrorBefore(), 100 * r.maxErrorAfter());
        try {
            Files.writeString(output, header + yaml.writeValueAsString(r.fitted()));
        } catch (IOException e) {
            throw new ConfigException("--output: cannot write " + output + ": " + e.getMessage(), e);
        }
    }
}
