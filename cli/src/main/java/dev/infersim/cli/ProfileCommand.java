package dev.infersim.cli;

import dev.infersim.cli.options.DeploymentOptions;
import dev.infersim.engine.BatchShape;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.RooflineCostModel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/** {@code infersim profile}: the cost model's predicted step times for a grid of prefill and decode shapes. */
@Command(name = "profile", mixinStandardHelpOptions = true,
        description = "Print predicted engine step times (prefill and decode) and the deployment's KV capacity.")
public final class ProfileCommand implements Runnable {

    @Mixin
    DeploymentOptions deployment;

    @Option(names = "--prefill-lens", split = ",", defaultValue = "512,2048,8192",
            description = "Prompt lengths for prefill rows, tokens (default: ${DEFAULT-VALUE}).")
    List<Integer> prefillLens;

    @Option(names = "--decode-batches", split = ",", defaultValue = "1,8,64,256",
            description = "Batch sizes for decode rows (default: ${DEFAULT-VALUE}).")
    List<Integer> decodeBatches;

    @Option(names = "--contexts", split = ",", defaultValue = "512,2048",
            description = "Tokens already in each decoding sequence (default: ${DEFAULT-VALUE}).")
    List<Integer> contexts;

    @Option(names = "--format", defaultValue = "table", description = "csv or table (default: ${DEFAULT-VALUE}).")
    String format;

    @Override
    public void run() {
        if (!format.equals("csv") && !format.equals("table")) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--format: expected csv or table, got '" + format + "'");
        }
        checkPositive("--prefill-lens", prefillLens);
        checkPositive("--decode-batches", decodeBatches);
        checkPositive("--contexts", contexts);
        Deployment d = deployment.deployment();
        KvCapacity kv = KvCapacity.of(d);
        List<StepTimes.Row> rows = StepTimes.grid(d.engine().hostTime().over(new RooflineCostModel(d)), prefillLens, decodeBatches, contexts);
        PrintStream out = System.out;
        if (format.equals("csv")) {
            out.println(StepTimes.CSV_HEADER);
            rows.forEach(r -> out.println(r.csv()));
            out.flush();
            System.err.println(summary(d, kv));
        } else {
            out.printf(Locale.ROOT, "%s on %s x%d, %s weights, %s KV cache%n", d.model().name(), d.gpu().name(),
                    d.tensorParallelSize(), d.dtype(), d.kvCacheDtype());
            out.printf(Locale.ROOT, "%-8s %6s %15s %11s %10s%n", "phase", "batch", "context_tokens", "new_tokens", "step_ms");
            rows.forEach(r -> out.printf(Locale.ROOT, "%-8s %6d %15d %11d %10.3f%n", r.phase(), r.batch(), r.contextTokens(),
                    r.newTokens(), r.stepMs()));
            out.println(summary(d, kv));
        }
    }

    private static String summary(Deployment d, KvCapacity kv) {
        double singleStreamMs = new RooflineCostModel(d).stepNanos(new BatchShape().addDecode(kv.maxModelLen() > 1024 ? 1024 : 1)) / 1e6;
        return kv.describe() + String.format(Locale.ROOT,
                "%nweights %.2f GB per GPU; bandwidth-bound single-stream decode at 1,024 context: %.2f ms/token = %.1f tokens/s",
                kv.weightBytesPerGpu() / 1e9, singleStreamMs, 1000.0 / singleStreamMs);
    }

    private void checkPositive(String flag, List<Integer> values) {
        for (int v : values) {
            if (v < 1) {
                throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                        flag + ": values must be >= 1, got " + v);
            }
        }
    }
}
