package dev.infersim.engine.calibration;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.profile.Precision;
import dev.infersim.common.ConfigException;
import dev.infersim.common.InputFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * Reads measured step times: the CSV calibration/infersim_profile_gpu.py writes, or `infersim profile --format csv`
 * with a measured_ms column. Leading {@code # key: value} lines are the header (GPU, versions, measured ceilings).
 * Columns: phase, batch, context_tokens, new_tokens and measured_ms are required; model, dtype (weights) and tp are
 * optional and default to the given deployment. Rows with a dtype column keep their KV cache in BF16, as the kit does.
 * A {@code # shard: ...} header line (the kit's {@code --shard N}) marks every row as one GPU's part of a
 * tensor-parallel step, timed without its all-reduces.
 */
public final class MeasurementFile {
    private static final List<String> REQUIRED = List.of("phase", "batch", "context_tokens", "new_tokens", "measured_ms");

    /** The header's {@code key: value} pairs and the rows. */
    public record Contents(Map<String, String> header, List<Calibrator.Measurement> rows) {

        /** A measured ceiling from the header, e.g. {@code bf16_gemm_tflops}. */
        public OptionalDouble ceiling(String name) {
            String v = header.get("ceiling " + name);
            return v == null ? OptionalDouble.empty() : OptionalDouble.of(Double.parseDouble(v));
        }
    }

    private MeasurementFile() {
    }

    /**
     * @param flag     the flag the file came from, for error messages
     * @param defaults the deployment for rows without model, dtype or tp columns
     */
    public static Contents read(Path file, String flag, Deployment defaults) {
        InputFile.requireReadable(flag, "file", file);
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new ConfigException(flag + ": cannot read " + file + ": " + e.getMessage(), e);
        }
        Map<String, String> header = new LinkedHashMap<>();
        int i = 0;
        for (; i < lines.size() && (lines.get(i).startsWith("#") || lines.get(i).isBlank()); i++) {
            String line = lines.get(i).substring(Math.min(1, lines.get(i).length())).trim();
            int colon = line.indexOf(':');
            if (colon > 0) {
                header.put(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
            }
        }
        ConfigException.check(i < lines.size(), "%s: %s has no column header", flag, file);
        List<String> columns = Arrays.asList(lines.get(i).trim().split("\\s*,\\s*"));
        for (String c : REQUIRED) {
            ConfigException.check(columns.contains(c), "%s: %s:%d: missing column '%s' (need %s; model, dtype and tp "
                    + "are optional)", flag, file, i + 1, c, String.join(",", REQUIRED));
        }
        boolean shard = header.containsKey("shard");
        Map<String, Deployment> deployments = new HashMap<>();
        List<Calibrator.Measurement> rows = new ArrayList<>();
        for (int n = i + 1; n < lines.size(); n++) {
            String line = lines.get(n).trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s*,\\s*");
            try {
                ConfigException.check(f.length == columns.size(), "expected %d columns, got %d", columns.size(), f.length);
                String model = field(columns, f, "model");
                String dtype = field(columns, f, "dtype");
                String tp = field(columns, f, "tp");
                Deployment d = deployments.computeIfAbsent(model + "|" + dtype + "|" + tp, k -> deployment(defaults, model, dtype, tp));
                rows.add(new Calibrator.Measurement(d, field(columns, f, "phase"), Integer.parseInt(field(columns, f, "batch")),
                        Integer.parseInt(field(columns, f, "context_tokens")), Integer.parseInt(field(columns, f, "new_tokens")),
                        Double.parseDouble(field(columns, f, "measured_ms")), shard));
            } catch (NumberFormatException | ConfigException e) {
                throw new ConfigException(String.format("%s: %s:%d: %s", flag, file, n + 1, e.getMessage()), e);
            }
        }
        ConfigException.check(!rows.isEmpty(), "%s: %s has no measurements", flag, file);
        return new Contents(header, rows);
    }

    private static String field(List<String> columns, String[] f, String name) {
        int i = columns.indexOf(name);
        return i < 0 ? null : f[i];
    }

    private static Deployment deployment(Deployment defaults, String model, String dtype, String tp) {
        Deployment.Builder b = defaults.toBuilder();
        if (model != null) {
            b.model(Profiles.model(model));
        }
        if (dtype != null) {
            b.dtype(Precision.parse("dtype", dtype)).kvCacheDtype(Precision.BF16);
        }
        if (tp != null) {
            b.tensorParallelSize(Integer.parseInt(tp));
        }
        return b.build();
    }
}
