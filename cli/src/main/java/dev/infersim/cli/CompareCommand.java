package dev.infersim.cli;

import dev.infersim.bench.report.RunComparison;
import dev.infersim.common.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code infersim compare A.json B.json}: two results side by side with deltas, and a Mann-Whitney U test per latency
 * metric on the per-request values of their detailed files, saying whether B differs from A significantly.
 */
@Command(name = "compare", mixinStandardHelpOptions = true,
        description = "Compare two benchmark (or simulate) results side by side; with detailed files, test whether TTFT, "
                + "TPOT and E2EL distributions differ significantly (Mann-Whitney U).")
public final class CompareCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "A.json", description = "Baseline result.")
    Path a;

    @Parameters(index = "1", paramLabel = "B.json", description = "Result compared with the baseline.")
    Path b;

    @Option(names = "--detailed-a", description = "Per-request JSONL of A (default: the result's infersim_detailed_file).")
    Path detailedA;

    @Option(names = "--detailed-b", description = "Per-request JSONL of B (default: the result's infersim_detailed_file).")
    Path detailedB;

    @Option(names = "--alpha", defaultValue = "0.05", description = "Significance level (default: ${DEFAULT-VALUE}).")
    double alpha;

    @Override
    public Integer call() {
        ConfigException.check(alpha > 0 && alpha < 1, "--alpha must be in (0, 1), got %s", alpha);
        RunComparison.Compared ra = read(a);
        RunComparison.Compared rb = read(b);
        Path da = detailedA != null ? readable("--detailed-a", detailedA) : detailFile(ra, a);
        Path db = detailedB != null ? readable("--detailed-b", detailedB) : detailFile(rb, b);
        List<RunComparison.Test> tests = da == null || db == null ? null : tests(da, db);
        PrintStream out = System.out;
        out.printf(Locale.ROOT, "%-26s %14s %14s %14s %9s%n", "metric", "A", "B", "B - A", "change");
        for (RunComparison.Row row : RunComparison.rows(ra, rb)) {
            out.printf(Locale.ROOT, "%-26s %14s %14s %14s %9s%n", row.metric(), num(row.a()), num(row.b()),
                    num(row.delta()), row.relativeDelta() == null ? "-"
                            : String.format(Locale.ROOT, "%+.1f%%", 100 * row.relativeDelta()));
        }
        if (tests == null) {
            out.println("No per-request files (run with --save-detailed, or pass --detailed-a/--detailed-b): "
                    + "no significance test.");
            return 0;
        }
        out.printf(Locale.ROOT, "%nMann-Whitney U (two-sided, alpha %.3f) on per-request values:%n", alpha);
        for (RunComparison.Test t : tests) {
            out.printf(Locale.ROOT, "%-8s median A %.3f ms (n=%d), B %.3f ms (n=%d): p = %.4g -> %s%n",
                    t.metric().replace("_ms", ""), t.medianA(), t.samplesA(), t.medianB(), t.samplesB(), t.pValue(),
                    t.significant() ? "significant difference" : "no significant difference");
        }
        return 0;
    }

    private static RunComparison.Compared read(Path file) {
        ConfigException.check(Files.isReadable(file), "%s: no such readable result file", file);
        RunComparison.Compared result;
        try {
            result = RunComparison.Compared.read(file);
        } catch (UncheckedIOException e) {
            throw new ConfigException(e.getMessage(), e); // already one line naming the file
        }
        ConfigException.check(!result.sweep(), "%s: a sweep result; compare takes two single-run results "
                + "(bench or simulate --save-result)", file);
        // A per-request JSONL or a trace starts with a JSON object too, but one with no metric to compare.
        ConfigException.check(result.hasSummary(),
                "%s: not a result JSON (no completed, duration, throughput or latency keys)", file);
        return result;
    }

    private List<RunComparison.Test> tests(Path da, Path db) {
        try {
            return RunComparison.tests(da, db, alpha);
        } catch (UncheckedIOException e) {
            throw new ConfigException(e.getMessage() + " (expected the JSON lines of --save-detailed)", e);
        }
    }

    private static Path readable(String flag, Path file) {
        ConfigException.check(Files.isReadable(file), "%s: no such readable file %s", flag, file);
        return file;
    }

    private static Path detailFile(RunComparison.Compared result, Path resultFile) {
        if (result.detailedFile() == null) {
            return null;
        }
        Path p = Path.of(result.detailedFile());
        if (!Files.isReadable(p) && resultFile.toAbsolutePath().getParent() != null) {
            p = resultFile.toAbsolutePath().getParent().resolve(p.getFileName());
        }
        return Files.isReadable(p) ? p : null;
    }

    private static String num(Double v) {
        return v == null ? "-" : String.format(Locale.ROOT, "%.3f", v);
    }
}
