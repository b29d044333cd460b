package dev.infersim.cli;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.observe.TruthLog;
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
    void printsTheFindingsWithTheirCauseWritesThemAsJsonAndExitsThree(@TempDir Path dir) throws Exception {
        Path run = FILES.resolve("guidellm-0.7.3-poisson-10");
        Path json = dir.resolve("check.json");
        CliRun cli = CliRun.of("check-harness", "--format", "guidellm", run.resolve("result.json.gz").toString(),
                "--truth", run.resolve("truth.jsonl.gz").toString(), "--json", json.toString());
        assertEquals(3, cli.exitCode(), cli.err());
        assertTrue(cli.out().startsWith("Matched 200 of 200 harness requests to the truth: 200 by request id, 0 by output "
                + "text, 0 by assignment"), cli.out());
        assertTrue(cli.out().contains("Rate at the server over the 200 measured requests: 103.093 req/s (95% interval "),
                cli.out());
        assertTrue(cli.out().contains("3 findings: the harness's numbers differ from what the server did."), cli.out());
        assertTrue(cli.out().contains("Finding rate_off_target: the server saw 103.09 req/s"), cli.out());
        assertTrue(cli.out().contains("Finding repeated_schedule_gaps: the harness's own schedule repeats gaps: "
                + "2.533 ms x9, 102.006 ms x7"), cli.out());
        assertTrue(cli.out().contains("  cause: Several schedulers draw the same sequence of gaps"), cli.out());
        String written = java.nio.file.Files.readString(json);
        assertTrue(written.contains("\"verdict\" : \"findings\""), written);
        assertTrue(written.contains("\"id\" : \"arrival_process_off\""), written);
        assertTrue(written.contains("\"most_repeated_gap_ms\" : 2.533"), written);
    }

    @Test
    void aCleanRunExitsZeroAndOneCheckedAgainstAnotherRunsTruthIsNotJudgedAndExitsFour() {
        Path constant = FILES.resolve("guidellm-0.7.3-constant-10/result.json.gz");
        CliRun clean = CliRun.of("check-harness", "--format", "guidellm", constant.toString(), "--truth",
                FILES.resolve("guidellm-0.7.3-constant-10/truth.jsonl.gz").toString());
        assertEquals(0, clean.exitCode(), clean.err());
        assertTrue(clean.out().contains("No finding: the harness measured what the server did"), clean.out());
        CliRun other = CliRun.of("check-harness", "--format", "guidellm", constant.toString(), "--truth",
                FILES.resolve("guidellm-0.7.3-poisson-10/truth.jsonl.gz").toString());
        assertEquals(4, other.exitCode(), other.err());
        assertTrue(other.out().contains("Not judged: 0 of 200 harness requests (0.0%) could be matched to the truth, "
                + "under 95%. Diagnosis:"), other.out());
        assertTrue(other.out().contains("Finding truth_of_another_run: none of the harness's 200 request ids or texts is "
                + "among the truth log's 200 rows"), other.out());
        assertTrue(!other.out().contains("No finding"), other.out());
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
        // On a loaded machine the client may read late (event_loop_stalls, exit 3); it never measures wrongly.
        assertTrue(run.exitCode() == 0 || run.exitCode() == 3, run.out() + run.err());
        assertTrue(run.out().startsWith("Matched 20 of 20 harness requests to the truth: 20 by request id"), run.out());
        // One token a chunk: as many ITLs as token gaps, and the counts are the server's usage.
        assertTrue(run.out().contains("itl_count                         20       0.000       0.000       0.000       0.000"),
                run.out());
        assertTrue(run.out().contains("output_tokens                     20       0.000       0.000       0.000       0.000"),
                run.out());
        // The client cannot see a token before the server sends it, nor send a request after the server has it.
        String ttft = run.out().lines().filter(l -> l.startsWith("ttft_ms")).findFirst().orElseThrow();
        assertTrue(Double.parseDouble(ttft.trim().split("\\s+")[2]) >= 0, run.out());
        assertTrue(run.out().lines().filter(l -> l.startsWith("Finding ")).allMatch(l -> l.startsWith(
                "Finding event_loop_stalls")), run.out());
    }

    @Test
    void badInputIsOneLineNamingTheFlagOrFile() {
        CliRun run = CliRun.of("check-harness", "--format", "locust", "x.json", "--truth", "t.jsonl");
        assertEquals(2, run.exitCode());
        assertEquals("infersim: --format must be vllm, aiperf, guidellm, llmperf or generic, got 'locust'",
                run.err().trim());
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
