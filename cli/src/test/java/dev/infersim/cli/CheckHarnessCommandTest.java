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

/** {@code infersim check-harness} on the benchmark-client's harness files (HarnessCheckTest has the numbers) and on a live run. */
class CheckHarnessCommandTest {
    private static final Path FILES = Path.of("../benchmark-client/src/test/resources/harness");

    @Test
    void printsTheFindingsWithTheirCauseAndWritesThemAsJson(@TempDir Path dir) throws Exception {
        Path run = FILES.resolve("guidellm-0.7.3-poisson-10");
        Path json = dir.resolve("check.json");
        CliRun cli = CliRun.of("check-harness", "--format", "guidellm", run.resolve("result.json.gz").toString(),
                "--truth", run.resolve("truth.jsonl.gz").toString(), "--json", json.toString());
        assertEquals(0, cli.exitCode(), cli.err());
        assertTrue(cli.out().startsWith("Matched 200 requests to the truth by request id: 0 ambiguous, 0 matching errors"),
                cli.out());
        assertTrue(cli.out().contains("Rate at the server: 103.093 req/s; asked: Poisson at 10.00 req/s"), cli.out());
        assertTrue(cli.out().contains("Finding rate_off_target: the server saw 103.09 req/s against 10.00 requested"),
                cli.out());
        assertTrue(cli.out().contains("Finding repeated_schedule_gaps: the harness's own schedule repeats gaps: "
                + "2.533 ms x9, 102.006 ms x7"), cli.out());
        assertTrue(cli.out().contains("  cause: Several schedulers draw the same sequence of gaps"), cli.out());
        String written = java.nio.file.Files.readString(json);
        assertTrue(written.contains("\"id\" : \"arrival_process_off\""), written);
        assertTrue(written.contains("\"most_repeated_gap_ms\" : 2.533"), written);
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
        assertTrue(run.out().startsWith("Matched 20 requests to the truth by request id: 0 ambiguous, 0 matching errors"),
                run.out());
        // One token a chunk: as many ITLs as token gaps, and the counts are the server's usage.
        assertTrue(run.out().contains("itl_count                     20       0.000       0.000       0.000       0.000"),
                run.out());
        assertTrue(run.out().contains("output_tokens                 20       0.000       0.000       0.000       0.000"),
                run.out());
        // The client cannot see a token before the server sends it, nor send a request after the server has it.
        String ttft = run.out().lines().filter(l -> l.startsWith("ttft_ms")).findFirst().orElseThrow();
        assertTrue(Double.parseDouble(ttft.trim().split("\\s+")[2]) >= 0, run.out());
        assertTrue(!run.out().contains("per_chunk_itl") && !run.out().contains("token_coalescing")
                && !run.out().contains("warmup_counted") && !run.out().contains("tokens_differ"), run.out());
    }

    @Test
    void badInputIsOneLineNamingTheFlagOrFile() {
        CliRun run = CliRun.of("check-harness", "--format", "locust", "x.json", "--truth", "t.jsonl");
        assertEquals(2, run.exitCode());
        assertEquals("infersim: --format must be vllm, aiperf or guidellm, got 'locust'", run.err().trim());
        run = CliRun.of("check-harness", "--format", "vllm", FILES.resolve("vllm.json").toString(),
                "--truth", FILES.resolve("truth.jsonl").toString(), "--request-rate", "0");
        assertEquals(2, run.exitCode());
        assertEquals("infersim: --request-rate: 0.0 is below or at 0, the least it takes", run.err().trim());
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
