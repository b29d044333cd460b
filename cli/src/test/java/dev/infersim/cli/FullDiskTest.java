package dev.infersim.cli;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.observe.TruthLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A full disk or an unwritable directory ends a command with its summary printed, one line naming the file and the
 * cause, exit code 2, and no file half written or left behind; the truth log keeps whole rows and counts the rest.
 */
@EnabledOnOs(OS.LINUX)
class FullDiskTest {
    @RegisterExtension
    static final InProcessMock MOCK = new InProcessMock();

    @TempDir
    Path dir;

    @Test
    void benchOnAFullDiskPrintsItsSummaryThenOneLineAndLeavesNoTemporaryFile() throws Exception {
        try (SmallDisk disk = SmallDisk.mount(dir.resolve("disk"), 256)) {
            disk.fill();
            CliRun r = CliRun.of("bench", "--base-url", MOCK.server().baseUrl(), "--model", MOCK.server().options().servedModelName(),
                    "--num-prompts", "20", "--request-rate", "inf", "--random-input-len", "32", "--random-output-len", "4",
                    "--ignore-eos", "--num-warmups", "0", "--save-result", "--save-detailed", "--result-dir", disk.dir().toString(),
                    "--result-filename", "r.json");
            assertEquals(2, r.exitCode(), r.out() + r.err());
            assertTrue(r.out().contains("Serving Benchmark Result"), "the summary first: " + r.out());
            assertOneLine(r.err(), "No space left on device");
            assertTrue(r.err().contains(disk.dir().resolve("r.jsonl").toString()), "names the file by its name: " + r.err());
            assertEquals(List.of("filler"), disk.files(), "nothing half written, no temporary file");
        }
    }

    @Test
    void simulateOnAFullResultDirectoryNamesEveryFileAndStillWritesItsHtmlElsewhere() throws Exception {
        try (SmallDisk disk = SmallDisk.mount(dir.resolve("disk"), 256)) {
            disk.fill();
            Path html = dir.resolve("elsewhere").resolve("report.html");
            CliRun r = CliRun.of("simulate", "--num-prompts", "20", "--request-rate", "10", "--save-result", "--save-detailed",
                    "--result-dir", disk.dir().toString(), "--result-filename", "r.json", "--html", html.toString());
            assertEquals(2, r.exitCode(), r.out() + r.err());
            assertTrue(r.out().contains("Serving Benchmark Result"), "the summary first: " + r.out());
            assertOneLine(r.err(), "No space left on device");
            assertTrue(r.err().contains(disk.dir().resolve("r.jsonl").toString()), "names the per-request file: " + r.err());
            assertTrue(r.err().contains(disk.dir().resolve("r.json").toString() + ":")
                    || r.err().contains(disk.dir().resolve("r.json") + " "), "names the result file: " + r.err());
            assertTrue(Files.size(html) > 0 && r.out().contains("HTML report written to " + html), "the HTML report is written: " + r.out());
            assertEquals(List.of("filler"), disk.files(), "nothing half written, no temporary file");
        }
    }

    @Test
    void aResultDirectoryNothingCanBeWrittenToIsOneLine() {
        CliRun r = CliRun.of("simulate", "--num-prompts", "20", "--request-rate", "10", "--save-result", "--result-dir", "/proc/1");
        assertEquals(2, r.exitCode(), r.out() + r.err());
        assertOneLine(r.err(), "/proc/1");
    }

    @Test
    void anHtmlReportOnAFullDiskIsNotLeftTruncated() throws Exception {
        try (SmallDisk disk = SmallDisk.mount(dir.resolve("disk"), 256)) {
            disk.fill();
            CliRun r = CliRun.of("simulate", "--num-prompts", "20", "--request-rate", "10", "--html",
                    disk.dir().resolve("report.html").toString());
            assertEquals(2, r.exitCode(), r.out() + r.err());
            assertTrue(r.out().contains("Serving Benchmark Result"), r.out());
            assertOneLine(r.err(), "--html: cannot write " + disk.dir().resolve("report.html"));
            assertEquals(List.of("filler"), disk.files());
        }
    }

    @Test
    void theTruthLogOnAFullDiskKeepsWholeRowsAndCountsTheRest() throws Exception {
        try (SmallDisk disk = SmallDisk.mount(dir.resolve("disk"), 64)) {
            Path file = disk.dir().resolve("truth.jsonl");
            TruthLog log = TruthLog.open(file, TruthLog.DEFAULT_RING_CHARS);
            Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
            MockServer server = MockServer.start(ServerOptions.builder(d).port(0).timeScale(100).eventLoops(1).truthLog(log).build())
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            HttpClient http = HttpClient.newHttpClient();
            String dropped;
            try {
                // rows of 64 token times each, about 3 KB, until well past the 64 KiB disk
                for (int i = 0; i < 60; i++) {
                    http.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/completions"))
                            .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"hi\",\"max_tokens\":64,\"ignore_eos\":true}"))
                            .header("content-type", "application/json").build(), HttpResponse.BodyHandlers.discarding());
                }
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (log.written() + log.dropped() < 60 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                dropped = http.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/infersim/truth")).build(),
                        HttpResponse.BodyHandlers.discarding()).headers().firstValue("x-infersim-truth-dropped").orElseThrow();
            } finally {
                server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
                log.close();
            }
            assertTrue(log.droppedWriteFailed() > 0, "the disk filled up");
            assertEquals(60, log.written() + log.dropped(), "every row is written or counted");
            assertEquals(Long.toString(log.dropped()), dropped);
            assertTrue(log.writeFailure().contains("No space left on device"), log.writeFailure());
            List<String> lines = Files.readAllLines(file);
            assertEquals(log.written(), lines.size());
            for (String line : lines) {
                assertTrue(line.startsWith("{") && line.endsWith("}"), "whole rows only: " + line);
            }
        }
    }

    private static void assertOneLine(String err, String contains) {
        assertEquals(1, err.strip().lines().count(), err);
        assertTrue(err.startsWith("infersim: ") && err.contains(contains), err);
        assertFalse(err.contains("\tat "), err);
    }
}
