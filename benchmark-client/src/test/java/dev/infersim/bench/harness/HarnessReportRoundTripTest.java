package dev.infersim.bench.harness;

import dev.infersim.bench.harness.HarnessResults.Format;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;

import static dev.infersim.bench.harness.HarnessCheckTest.resource;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code check-harness --json}'s report is read back by the type that wrote it: a committed report (each run's
 * {@code report.json}, written by {@code check-harness --json} when the report gained the verdict and the matching by
 * identity, NaN as null among them; rewrite them with that command when the schema changes) and a report written now
 * are read and written again byte for byte.
 */
class HarnessReportRoundTripTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @CsvSource({"vllm-0.6.1-poisson-20", "guidellm-0.7.3-poisson-10", "aiperf-poisson-10", "infersim-bench-poisson-20"})
    void aCommittedReportIsReadAndWrittenAgainByteForByte(String run) throws Exception {
        Path file = resource(run).resolve("report.json");
        assertEquals(Files.readString(file), HarnessCheck.toJson(HarnessCheck.read(file)));
    }

    @ParameterizedTest
    @CsvSource({"VLLM, vllm-0.6.1-poisson-20, result.json.gz", "GUIDELLM, guidellm-0.7.3-poisson-10, result.json.gz",
            "AIPERF, aiperf-poisson-10, profile_export.jsonl.gz", "VLLM, infersim-bench-poisson-20, bench.json.gz"})
    void aReportWrittenNowIsReadBackAsTheSameReport(Format format, String run, String result) throws Exception {
        HarnessResults.Results results = HarnessResults.read(format, resource(run).resolve(result));
        HarnessCheck.Report report = HarnessCheck.check(results,
                TruthTimeline.read(resource(run).resolve("truth.jsonl.gz")), results.target());
        Path file = dir.resolve("report.json");
        Files.writeString(file, HarnessCheck.toJson(report));
        HarnessCheck.Report read = HarnessCheck.read(file);
        assertEquals(report, read);
        assertEquals(Files.readString(file), HarnessCheck.toJson(read));
    }
}
