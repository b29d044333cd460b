package dev.infersim.cli;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.MockServer;
import dev.infersim.server.ServerOptions;
import dev.infersim.server.TruthLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

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
    void infersimsOwnBenchAgreesWithTheTruthOnEveryCountAndNeverReadsEarly(@TempDir Path dir) throws Exception {
        Path truth = dir.resolve("truth.jsonl");
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        CliRun bench;
        try (TruthLog log = TruthLog.open(truth, TruthLog.DEFAULT_RING_CHARS)) {
            MockServer server = MockServer.start(ServerOptions.builder(d).port(0).timeScale(10).eventLoops(1).truthLog(log).build())
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            try {
                bench = CliRun.of("bench", "--base-url", server.baseUrl(), "--model", server.options().servedModelName(),
                        "--num-prompts", "20", "--request-rate", "20", "--random-input-len", "64", "--random-output-len", "8",
                        "--ignore-eos", "--num-warmups", "2", "--max-send-lag-ms", "1000", "--save-result",
                        "--save-detailed", "--result-dir", dir.toString(), "--result-filename", "bench.json");
            } finally {
                server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
        }
        assertTrue(bench.exitCode() == 0 || bench.exitCode() == 3, bench.out() + bench.err());
        CliRun run = CliRun.of("check-harness", "--format", "vllm", dir.resolve("bench.json").toString(),
                "--truth", truth.toString());
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().startsWith("Matched 20 requests"), run.out());
        // One token a chunk: as many ITLs as token gaps, and the counts are the server's usage.
        assertTrue(run.out().contains("itl_count           20       0.000       0.000       0.000       0.000"), run.out());
        assertTrue(run.out().contains("output_tokens       20       0.000       0.000       0.000       0.000"), run.out());
        // The client cannot see a token before the server sends it, nor send a request after the server has it.
        String ttft = run.out().lines().filter(l -> l.startsWith("ttft_ms")).findFirst().orElseThrow();
        assertTrue(Double.parseDouble(ttft.trim().split("\\s+")[2]) >= 0, run.out());
        assertTrue(!run.out().contains("per-chunk ITL"), run.out());
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
