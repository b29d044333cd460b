package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** bench, compare and sweep end to end against an in-process mock server running 10x faster than real time. */
class BenchCommandTest {
    @RegisterExtension
    static final InProcessMock MOCK = new InProcessMock();

    @TempDir
    Path dir;

    private CliRun bench(String name, String seed) {
        return CliRun.of("bench", "--base-url", MOCK.server().baseUrl(), "--model", MOCK.server().options().servedModelName(),
                "--num-prompts", "40", "--request-rate", "40", "--random-input-len", "64", "--random-output-len", "8",
                "--ignore-eos", "--seed", seed, "--num-warmups", "4", "--goodput", "ttft:500", "--validate",
                "--max-send-lag-ms", "1000", "--save-result", "--save-detailed", "--result-dir", dir.toString(),
                "--result-filename", name, "--html", dir.resolve(name + ".html").toString(),
                "--metadata", "purpose=test");
    }

    @Test
    void benchWritesResultDetailAndHtmlAndCompareTestsTheDifference() throws Exception {
        CliRun a = bench("a.json", "1");
        assertEquals(0, a.exitCode(), a.out() + a.err());
        assertTrue(a.out().contains("Serving Benchmark Result") && a.out().contains("TTFT error vs server"), a.out());
        String json = Files.readString(dir.resolve("a.json"));
        assertTrue(json.contains("\"purpose\" : \"test\"") && json.contains("\"request_goodput\""), json);
        // as in vLLM (and simulate), the 4 warmups come on top of the 40 measured prompts
        assertEquals(40, Files.readAllLines(dir.resolve("a.jsonl")).stream().filter(l -> !l.isBlank()).count());
        assertEquals(40, new ObjectMapper().readTree(json).get("itls").size(), "vLLM's per-request arrays");
        assertTrue(Files.size(dir.resolve("a.json.html")) > 1_000_000, "ECharts is inlined");
        assertEquals(0, bench("b.json", "2").exitCode());

        CliRun compare = CliRun.of("compare", dir.resolve("a.json").toString(), dir.resolve("b.json").toString());
        assertEquals(0, compare.exitCode(), compare.err());
        assertTrue(compare.out().contains("mean_ttft_ms") && compare.out().contains("Mann-Whitney"), compare.out());
    }

    @Test
    void theInitialTestRequestLeavesNothingInThePrefixCacheForRequestZero() throws Exception {
        CliRun r = CliRun.of("bench", "--base-url", MOCK.server().baseUrl(), "--model", MOCK.server().options().servedModelName(),
                "--num-prompts", "1", "--request-rate", "inf", "--random-input-len", "256", "--random-output-len", "4",
                "--ignore-eos", "--seed", "77", "--max-send-lag-ms", "1000", "--save-result", "--save-detailed",
                "--result-dir", dir.toString(), "--result-filename", "probe.json");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        JsonNode row = new ObjectMapper().readTree(Files.readAllLines(dir.resolve("probe.jsonl")).get(0));
        assertEquals(0, row.get("index").asInt());
        assertEquals(0, row.get("cached_tokens").asInt(), row.toString());
    }

    @Test
    void sweepFindsKneeAndWritesOneCombinedResultNamingEachPointsDetailFile() throws Exception {
        CliRun r = CliRun.of("sweep", "--base-url", MOCK.server().baseUrl(), "--model", MOCK.server().options().servedModelName(),
                "--concurrencies", "1,4", "--num-prompts", "24", "--random-input-len", "32", "--random-output-len", "8",
                "--ignore-eos", "--num-warmups", "2", "--max-send-lag-ms", "1000", "--save-result", "--save-detailed",
                "--result-dir", dir.toString(), "--result-filename", "s.json", "--html", dir.resolve("s.html").toString());
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("Saturation knee"), r.out());
        assertTrue(r.out().contains("Sweep point 1 of 2: max_concurrency 1")
                && r.out().contains("Sweep point 2 of 2: max_concurrency 4"), "one progress line per load point: " + r.out());
        String json = Files.readString(dir.resolve("s.json"));
        assertTrue(json.contains("\"infersim_sweep\"") && json.contains("\"max_concurrency\" : 4"), json);
        JsonNode runs = new ObjectMapper().readTree(json).get("runs");
        for (int i = 0; i < 2; i++) {
            Path detail = dir.resolve("s-concurrency-" + List.of(1, 4).get(i) + ".jsonl");
            assertEquals(detail.toString(), runs.get(i).get("infersim_detailed_file").asText());
            assertEquals(24, Files.readAllLines(detail).stream().filter(l -> !l.isBlank()).count(),
                    "each point's own 24 measured requests");
            assertEquals(24, runs.get(i).get("ttfts").size(), "vLLM's per-request arrays of the point");
        }
        CliRun compare = CliRun.of("compare", dir.resolve("s.json").toString(), dir.resolve("s.json").toString());
        assertEquals(2, compare.exitCode(), compare.out() + compare.err());
        assertEquals(dir.resolve("s.json") + ": a sweep result; compare takes two single-run results (bench or simulate "
                + "--save-result)", compare.err().strip().replaceFirst("^infersim: ", ""));
    }

    /**
     * Each load point sends prompts of its own (point i uses --seed + i), so no point's TTFT is shortened by a cache
     * an earlier point filled; a sweep whose prompts the server has seen before says so on the terminal, and
     * --reset-prefix-cache makes the server forget them first.
     */
    @Test
    void everySweepPointSendsNewPromptsAndCacheHitsAreWarnedOnTheTerminal() throws Exception {
        List<String> args = List.of("sweep", "--base-url", MOCK.server().baseUrl(), "--model",
                MOCK.server().options().servedModelName(), "--request-rates", "20,40", "--num-prompts", "6",
                "--random-input-len", "256", "--random-output-len", "2", "--seed", "9191", "--max-send-lag-ms", "1000",
                "--save-result", "--save-detailed", "--result-dir", dir.toString());
        CliRun first = CliRun.of(concat(args, "--result-filename", "fresh.json"));
        assertEquals(0, first.exitCode(), first.out() + first.err());
        assertFalse(first.out().contains("Warning at"), first.out());
        for (String point : List.of("rate-20", "rate-40")) {
            assertTrue(DetailRows.read(dir.resolve("fresh-" + point + ".jsonl")).stream()
                    .allMatch(row -> row.get("cached_tokens").asInt() == 0), point + ": a prompt came from the cache");
        }
        JsonNode runs = new ObjectMapper().readTree(dir.resolve("fresh.json").toFile()).get("runs");
        assertEquals(9191, runs.get(0).get("infersim_workload_seed").asLong());
        assertEquals(9192, runs.get(1).get("infersim_workload_seed").asLong());

        CliRun again = CliRun.of(concat(args, "--result-filename", "again.json"));
        assertEquals(0, again.exitCode(), again.out() + again.err());
        assertTrue(again.out().contains("Warning at request_rate 20.0: the server served")
                && again.out().contains("Warning at request_rate 40.0: the server served"), again.out());

        CliRun reset = CliRun.of(concat(args, "--result-filename", "reset.json", "--reset-prefix-cache"));
        assertEquals(0, reset.exitCode(), reset.out() + reset.err());
        assertFalse(reset.out().contains("Warning at"), reset.out());
    }

    private static String[] concat(List<String> args, String... more) {
        List<String> all = new java.util.ArrayList<>(args);
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    @Test
    void benchReplaysATraceAtItsOwnTimestampsWithoutARateFlag() throws Exception {
        Path trace = dir.resolve("trace.jsonl");
        Files.writeString(trace, """
                {"timestamp_ms": 1000, "input_len": 40, "output_len": 4}
                {"timestamp_ms": 1300, "input_len": 60, "output_len": 6}
                {"timestamp_ms": 1750, "input_len": 20, "output_len": 2}
                """);
        CliRun r = CliRun.of("bench", "--base-url", MOCK.server().baseUrl(), "--model", MOCK.server().options().servedModelName(),
                "--dataset-name", "trace", "--dataset-path", trace.toString(), "--ignore-eos", "--num-warmups", "0",
                "--max-send-lag-ms", "1000", "--save-detailed", "--result-dir", dir.toString(), "--result-filename", "t.json");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("3 requests, open loop, at the trace's own timestamps"), r.out());
        List<JsonNode> rows = DetailRows.read(dir.resolve("t.jsonl"));
        assertEquals(List.of(40, 60, 20), rows.stream().map(n -> n.get("input_len").asInt()).toList());
        assertEquals(List.of(4, 6, 2), rows.stream().map(n -> n.get("output_len").asInt()).toList());
        assertEquals(List.of(0.0, 0.3, 0.75), rows.stream().map(n -> n.get("scheduled_time_s").asDouble()).toList(),
                "sent at the trace's timestamps, taken from its first line");
    }

    /** A live server and two requests: a bad flag must stop bench before it sends anything. */
    private CliRun shortBench(String... more) {
        List<String> args = new java.util.ArrayList<>(List.of("bench", "--base-url", MOCK.server().baseUrl(), "--model",
                MOCK.server().options().servedModelName(), "--num-prompts", "2", "--random-input-len", "16",
                "--random-output-len", "2", "--max-send-lag-ms", "1000"));
        args.addAll(List.of(more));
        return CliRun.of(args.toArray(String[]::new));
    }

    private static void assertRejectedBeforeSending(CliRun r, String flag) {
        assertEquals(2, r.exitCode(), r.out() + r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains(flag), r.err());
        assertTrue(!r.out().contains("Benchmarking"), "rejected before the run: " + r.out());
    }

    @Test
    void promptLengthOverTheCapIsOneLineNamingTheFlagNotANegativeArraySize() {
        assertRejectedBeforeSending(shortBench("--random-input-len", "2000000000"), "--random-input-len");
        assertRejectedBeforeSending(shortBench("--random-prefix-len", "2000000000"), "--random-prefix-len");
    }

    @Test
    void unknownPercentileMetricIsRejectedBeforeTheRunNotAfterIt() {
        assertRejectedBeforeSending(shortBench("--percentile-metrics", "ttft,latency"), "--percentile-metrics");
        CliRun spaced = shortBench("--percentile-metrics", "ttft, e2el");
        assertEquals(0, spaced.exitCode(), spaced.out() + spaced.err());
        assertTrue(spaced.out().contains("Mean E2EL (ms)"), "a space after the comma names the same metric");
    }

    @Test
    void resultDirectoryThatCannotExistIsRejectedBeforeTheRun() throws Exception {
        Path file = Files.writeString(dir.resolve("plain-file"), "x");
        String under = file.resolve("results").toString(); // a directory cannot be made under a regular file
        assertRejectedBeforeSending(shortBench("--save-result", "--result-dir", under), "--result-dir");
        assertRejectedBeforeSending(shortBench("--save-detailed", "--result-dir", under), "--result-dir");
        assertRejectedBeforeSending(CliRun.of("sweep", "--base-url", MOCK.server().baseUrl(), "--model",
                MOCK.server().options().servedModelName(), "--request-rates", "5", "--num-prompts", "2", "--random-input-len",
                "16", "--random-output-len", "2", "--save-result", "--result-dir", under), "--result-dir");
    }

    @Test
    void htmlOrResultFilePathThatCannotBeWrittenIsRejectedBeforeTheRun() throws Exception {
        Path file = Files.writeString(dir.resolve("plain-file"), "x");
        String under = file.resolve("report.html").toString(); // no folder can be made under a regular file
        assertRejectedBeforeSending(shortBench("--html", under), "--html");
        assertRejectedBeforeSending(shortBench("--html", dir.toString()), "--html");
        assertRejectedBeforeSending(shortBench("--save-result", "--result-dir", dir.toString(), "--result-filename",
                "plain-file/run.json"), "--result-filename");
        assertRejectedBeforeSending(CliRun.of("sweep", "--base-url", MOCK.server().baseUrl(), "--model",
                MOCK.server().options().servedModelName(), "--request-rates", "5", "--num-prompts", "2", "--random-input-len",
                "16", "--random-output-len", "2", "--html", under), "--html");
    }

    @Test
    void baseUrlThatNamesNoReachableHostAndPortIsOneLineNamingTheFlag() {
        // Each used to get past the flag check: a port over 65535 threw on the event loop and the run never ended, a
        // space gave a stack trace, no host connected to port 80 of localhost, and a query went into the request path.
        for (String url : List.of("http://127.0.0.1:99999", "http://a b:8000", "http://:8000", "http://127.0.0.1:8000?x=1")) {
            CliRun r = assertTimeoutPreemptively(Duration.ofSeconds(30),
                    () -> CliRun.of("bench", "--base-url", url, "--model", "m", "--num-prompts", "1"));
            assertEquals(2, r.exitCode(), url + ": " + r.out() + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertTrue(r.err().contains("--base-url"), r.err());
        }
    }

    @Test
    void trailingSlashOfTheBaseUrlIsDroppedInWhatBenchPrintsToo() {
        CliRun r = CliRun.of("bench", "--base-url", MOCK.server().baseUrl() + "/", "--model", MOCK.server().options().servedModelName(),
                "--num-prompts", "1", "--random-input-len", "16", "--random-output-len", "2", "--max-send-lag-ms", "1000");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("Benchmarking " + MOCK.server().baseUrl() + "/v1/completions"), r.out());
    }

    @Test
    void bannerDescribesARampUpAsARampNotAllAtOnce() {
        CliRun r = shortBench("--ramp-up-strategy", "linear", "--ramp-up-start-rps", "20", "--ramp-up-end-rps", "40");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("2 requests, open loop, linear ramp from 20.0 to 40.0 req/s"), r.out());
    }

    @Test
    void metadataCannotRewriteWhatWasMeasured() throws Exception {
        CliRun r = shortBench("--metadata", "completed=999", "mean_ttft_ms=1", "team=a", "--save-result",
                "--result-dir", dir.toString(), "--result-filename", "md.json");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        JsonNode json = new ObjectMapper().readTree(dir.resolve("md.json").toFile());
        assertEquals(2, json.get("completed").asInt(), "as in vLLM, the measured key wins");
        assertTrue(json.get("mean_ttft_ms").asDouble() != 1.0, json.toString());
        assertEquals("a", json.get("team").asText());
        assertRejectedBeforeSending(shortBench("--metadata", "infersim_valid=true"), "--metadata");
    }

    @Test
    void scrapeUrlThatIsNoHttpUrlIsRejectedBeforeTheRun() {
        // "notaurl" used to print a stack trace from the first poll and the run went on; ftp:// was polled in silence.
        for (String url : List.of("notaurl", "ftp://127.0.0.1/metrics", "http://:9000/metrics")) {
            assertRejectedBeforeSending(shortBench("--scrape-metrics", url), "--scrape-metrics");
        }
    }

    @Test
    void badEndpointIsOneLineNamingTheFlag() {
        CliRun r = CliRun.of("bench", "--model", "m", "--endpoint", "/v2/generate");
        assertEquals(2, r.exitCode());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("--endpoint"), r.err());
    }

    @Test
    void aBaseUrlEndingInV1AsServePrintsItIsTheServerRoot() {
        CliRun r = CliRun.of("bench", "--base-url", MOCK.server().baseUrl() + "/v1/", "--model",
                MOCK.server().options().servedModelName(), "--num-prompts", "2", "--random-input-len", "16",
                "--random-output-len", "2", "--max-send-lag-ms", "1000");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("Benchmarking " + MOCK.server().baseUrl() + "/v1/completions:"), r.out());
    }

    @Test
    void allAtOnceHasNoScheduleSoSendLagIsNotJudgedAndModelTimeIsShownBesideWallTime() {
        CliRun r = CliRun.of("bench", "--base-url", MOCK.server().baseUrl(), "--model", MOCK.server().options().servedModelName(),
                "--num-prompts", "4", "--random-input-len", "16", "--random-output-len", "4", "--ignore-eos",
                "--max-send-lag-ms", "0");
        assertEquals(0, r.exitCode(), "a zero limit cannot fail a run without a schedule: " + r.out() + r.err());
        assertTrue(r.out().contains("Send lag: send lag not judged"), r.out());
        assertTrue(r.out().contains("runs 10.0x faster than the modelled GPU")
                && r.out().contains("Model-time TPOT mean/median/p99 (ms):"), r.out());
    }

    @Test
    void sendingTheSamePromptsTwiceWarnsThatThePrefixCacheServedThem() {
        String[] args = {"bench", "--base-url", MOCK.server().baseUrl(), "--model", MOCK.server().options().servedModelName(),
                "--num-prompts", "4", "--random-input-len", "256", "--random-output-len", "2", "--seed", "4242",
                "--request-rate", "50", "--max-send-lag-ms", "1000"};
        CliRun first = CliRun.of(args);
        assertEquals(0, first.exitCode(), first.out() + first.err());
        assertFalse(first.out().contains("prefix cache"), first.out());
        CliRun again = CliRun.of(args);
        assertEquals(0, again.exitCode(), again.out() + again.err());
        assertTrue(again.out().contains("Warning: the server served") && again.out().contains("another --seed"),
                again.out());
    }

    @Test
    void aFailedInitialRequestStillWritesTheResultFileWithTheError() throws Exception {
        CliRun r = CliRun.of("bench", "--base-url", MOCK.server().baseUrl(), "--model", "no-such-model", "--num-prompts", "2",
                "--request-rate", "10", "--random-input-len", "16", "--random-output-len", "2", "--save-result", "--result-dir",
                dir.toString(), "--result-filename", "failed.json");
        assertEquals(2, r.exitCode(), r.out() + r.err());
        assertTrue(r.err().contains("the server serves: " + MOCK.server().options().servedModelName()), r.err());
        JsonNode json = new ObjectMapper().readTree(dir.resolve("failed.json").toFile());
        assertTrue(json.get("infersim_error").asText().contains("initial test request"), json.toString());
        assertFalse(json.get("infersim_valid").asBoolean());
        JsonNode arrivals = json.path("infersim_validity").path("arrivals");
        assertFalse(arrivals.path("judged").asBoolean(true), arrivals.toString());
        assertEquals("no measured request was sent", arrivals.path("reason").asText(), arrivals.toString());
    }

    @Test
    void aTokenizerFileThatIsNotThereIsRejectedBeforeTheRun() {
        assertRejectedBeforeSending(shortBench("--tokenizer", dir.resolve("missing/tokenizer.json").toString()),
                "--tokenizer");
    }

    @Test
    void aMistypedFlagGetsASuggestion() {
        CliRun r = shortBench("--requst-rate", "5");
        assertEquals(2, r.exitCode());
        assertTrue(r.err().contains("did you mean --request-rate"), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    /**
     * By default a scheduled run is judged by its arrival process and the client's timing error against what it
     * measured; --strict-timing (or a --max-send-lag-ms, which implies it) keeps the send-lag limit earlier versions
     * judged by, fitted to the machine or as given, and reports the timing error as information only.
     */
    @Test
    void strictTimingJudgesSendLagAgainstALimitWhereTheDefaultJudgesTheTimingErrorAgainstTheLatencies() throws Exception {
        JsonNode byDefault = timingRun("default.json");
        assertFalse(byDefault.at("/infersim_validity/strict_timing").asBoolean(), byDefault.toString());
        assertTrue(byDefault.get("infersim_send_lag_verdict").isNull(), byDefault.toString());
        assertTrue(byDefault.at("/infersim_validity/arrivals/judged").asBoolean(), byDefault.toString());
        assertTrue(byDefault.at("/infersim_validity/timing/message").asText().startsWith("client timing error p99"),
                byDefault.toString());

        JsonNode strict = timingRun("strict.json", "--strict-timing");
        assertTrue(strict.at("/infersim_validity/strict_timing").asBoolean(), strict.toString());
        assertEquals("calibration", strict.at("/infersim_send_lag_verdict/limit_source").asText(), strict.toString());
        assertTrue(strict.get("infersim_max_send_lag_ms").asDouble() >= 1, "at least 1 ms: " + strict);

        JsonNode limited = timingRun("limited.json", "--max-send-lag-ms", "1000");
        assertTrue(limited.at("/infersim_validity/strict_timing").asBoolean(), limited.toString());
        assertEquals("flag", limited.at("/infersim_send_lag_verdict/limit_source").asText(), limited.toString());
        assertEquals(1000.0, limited.get("infersim_max_send_lag_ms").asDouble());
        assertTrue(limited.at("/infersim_send_lag_verdict/message").asText().contains("within --max-send-lag-ms"),
                limited.toString());
    }

    private JsonNode timingRun(String name, String... flags) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("bench", "--base-url", MOCK.server().baseUrl(), "--model",
                MOCK.server().options().servedModelName(), "--num-prompts", "30", "--request-rate", "60",
                "--random-input-len", "32", "--random-output-len", "4", "--ignore-eos", "--seed", "31",
                "--client-warmups", "0", "--save-result", "--result-dir", dir.toString(), "--result-filename", name));
        args.addAll(List.of(flags));
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertTrue(r.exitCode() == 0 || r.exitCode() == 3, r.out() + r.err());
        return new ObjectMapper().readTree(dir.resolve(name).toFile());
    }
}
