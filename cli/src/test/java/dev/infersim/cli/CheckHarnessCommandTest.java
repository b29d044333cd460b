package dev.infersim.cli;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code infersim check-harness} on the benchmark-client's hand-written harness files (HarnessCheckTest has the numbers). */
class CheckHarnessCommandTest {
    private static final Path FILES = Path.of("../benchmark-client/src/test/resources/harness");

    @Test
    void reportsEachMetricsErrorAndTheBehavioursSeen() {
        CliRun run = CliRun.of("check-harness", "--format", "vllm", FILES.resolve("vllm.json").toString(),
                "--truth", FILES.resolve("truth.jsonl").toString());
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().contains("Matched 3 requests to the truth by request order and arrival order (truth rows 4, "
                + "earliest 1 unmatched"), run.out());
        assertTrue(run.out().contains("ttft_ms              3       1.000       2.000       3.960       4.000"), run.out());
        assertTrue(run.out().contains("Rate at the server: 33.333 req/s (target 50.000)"), run.out());
        assertTrue(run.out().contains("Seen: per-chunk ITL"), run.out());
        assertTrue(run.out().contains("Seen: rate under-delivery"), run.out());
    }

    @Test
    void badInputIsOneLineNamingTheFlagOrFile() {
        CliRun run = CliRun.of("check-harness", "--format", "locust", "x.json", "--truth", "t.jsonl");
        assertEquals(2, run.exitCode());
        assertEquals("infersim: --format must be vllm, aiperf or guidellm, got 'locust'", run.err().trim());
        run = CliRun.of("check-harness", "--format", "aiperf", FILES.resolve("vllm.json").toString(),
                "--truth", FILES.resolve("truth.jsonl").toString());
        assertEquals(2, run.exitCode());
        assertTrue(run.err().contains("vllm.json: not an AIPerf profile_export.jsonl (invalid JSON at line 1: "), run.err());
        assertEquals(1, run.err().trim().lines().count(), run.err());
        run = CliRun.of("check-harness", "--format", "vllm", FILES.resolve("vllm.json").toString(),
                "--truth", FILES.resolve("vllm.json").toString());
        assertEquals(2, run.exitCode());
        assertEquals(1, run.err().trim().lines().count(), run.err());
        assertTrue(run.err().contains("--truth"), run.err());
    }
}
