package dev.infersim.cli;

import dev.infersim.bench.report.HtmlReport;
import dev.infersim.bench.report.MergeKeys;
import dev.infersim.bench.report.ShardMerge;
import dev.infersim.cli.options.ReportOptions;
import dev.infersim.result.ServingReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code infersim merge SHARD.json...}: the results of the shards of one distributed {@code bench --shard I/N} run
 * combined into one result with vLLM's keys (see {@link ShardMerge}).
 */
@Command(name = "merge", mixinStandardHelpOptions = true,
        description = "Combine the results of bench --shard I/N into one result with vLLM's keys: counts and errors "
                + "summed, percentiles from the shards' added HdrHistograms (RESULT.hlog beside each), throughput over "
                + "the union of their time spans, each shard's send lag kept.")
public final class MergeCommand implements Callable<Integer> {

    @Parameters(arity = "1..*", paramLabel = "SHARD.json", description = "The result file of every shard.")
    List<Path> shards;

    @Option(names = "--save-result", description = "Write the merged result JSON.")
    boolean saveResult;

    @Option(names = "--result-dir", defaultValue = ".", description = "Directory of the result file (default: current).")
    Path resultDir;

    @Option(names = "--result-filename",
            description = "Merged result file name (default: vLLM's backend-RATEqps-MODEL-DATE.json of the first shard).")
    String resultFilename;

    @Option(names = "--html", paramLabel = "FILE", description = "Also write the HTML report of the merged result.")
    Path html;

    @Override
    public Integer call() {
        if (saveResult) {
            ReportOptions.writableFile("--result-dir", resultDir.resolve("x"));
        }
        if (html != null) {
            ReportOptions.writableFile("--html", html);
        }
        ServingReport<MergeKeys> merged = ShardMerge.merge(shards);
        PrintStream out = System.out;
        out.println("Merged " + shards.size() + " shards");
        merged.printSummary(out);
        OutputWrites writes = new OutputWrites();
        if (saveResult) {
            Path path = resultDir.resolve(resultFilename != null ? resultFilename : merged.defaultFileName());
            if (writes.attempt(() -> merged.write(path))) {
                out.println("Result written to " + path);
            }
        }
        if (html != null && writes.attempt(() -> HtmlReport.writeRun(html, merged.result()))) {
            out.println("HTML report written to " + html);
        }
        writes.finish();
        if (merged.producer().valid()) {
            return ExitCodes.OK;
        }
        // the merged run is only as valid as its shards: say which were not, and why, as bench does for its own run
        out.println("INVALID merged run (exit code 3): " + String.join("; ", merged.producer().invalidReasons()));
        return ExitCodes.INVALID_RUN;
    }
}
