package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SimulateCommandTest {

    @TempDir
    Path dir;

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    private CliRun simulate(String name, long seed) {
        return run("simulate", "--num-prompts", "300", "--request-rate", "20", "--seed", Long.toString(seed),
                "--random-range-ratio", "0.5", "--save-result", "--save-detailed", "--result-dir", dir.toString(),
                "--result-filename", name + ".json", "--goodput", "ttft:100", "tpot:20");
    }

    /**
     * {@code --seeds N}: N runs, their seeds named, each metric's mean with a 95% interval that holds it, each seed's mean
     * TTFT, the mean being the mean of those; and a flag that describes one run is refused in one line.
     */
    @Test
    void seedsReportTheMeanOverRunsWithItsInterval() {
        String[] fixed = {"simulate", "--timing", "fixed", "--time-to-first-token", "100", "--inter-token-latency", "5",
                "--max-num-seqs", "1", "--random-input-len", "64", "--random-output-len", "1", "--ignore-eos",
                "--request-rate", "8", "--num-prompts", "400", "--seed", "3"};
        CliRun r = run(concat(fixed, "--seeds", "4"));
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("Across 4 seeds (--seed 3 to 6)"), r.out());
        java.util.regex.Matcher mean = java.util.regex.Pattern.compile(
                "Mean TTFT \\(ms\\):\\s+([0-9.]+)\\s+95% CI ([0-9.]+)-([0-9.]+)").matcher(r.out());
        assertTrue(mean.find(), r.out());
        double m = Double.parseDouble(mean.group(1));
        assertTrue(Double.parseDouble(mean.group(2)) < m && m < Double.parseDouble(mean.group(3)), r.out());
        java.util.regex.Matcher each = java.util.regex.Pattern.compile("Mean TTFT of each seed \\(ms\\):\\s+(.*)")
                .matcher(r.out());
        assertTrue(each.find(), r.out());
        double[] seeds = java.util.Arrays.stream(each.group(1).split(",\\s*")).mapToDouble(Double::parseDouble).toArray();
        assertEquals(4, seeds.length);
        // each printed to 0.1 ms, so the mean of the printed means and the printed mean differ by up to 0.1
        assertEquals(java.util.Arrays.stream(seeds).average().orElseThrow(), m, 0.1, "the mean of the seeds' means");
        assertTrue(r.out().contains("Mean TPOT (ms):                          -"), "one token has no TPOT: " + r.out());
        CliRun one = run(concat(fixed, "--seeds", "1"));
        java.util.regex.Matcher single = java.util.regex.Pattern.compile("Mean TTFT \\(ms\\):\\s+([0-9.]+)")
                .matcher(one.out());
        assertTrue(single.find(), one.out());
        assertEquals(seeds[0], Double.parseDouble(single.group(1)), 0.06, "the first seed is the run --seed 3 makes");
        CliRun refused = run(concat(fixed, "--seeds", "4", "--save-result"));
        assertEquals(2, refused.exitCode());
        assertTrue(refused.err().strip().startsWith("infersim: --seeds 4 reports means over runs; --save-result"),
                refused.err());
    }

    /** Every run prints Little's law over the whole run, L against lambda W, which hold for any run. */
    @Test
    void everyRunPrintsLittlesLaw() {
        CliRun r = run("simulate", "--num-prompts", "300", "--request-rate", "20", "--random-input-len", "256",
                "--random-output-len", "32");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("Little's law \\(first send to last completion\\): "
                + "L = ([0-9.]+) requests in the system on average; lambda x W = [0-9.]+ req/s x [0-9.,]+ ms = ([0-9.]+) "
                + "\\(equal within 0.1%\\)").matcher(r.out());
        assertTrue(m.find(), r.out());
        assertEquals(Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)), 1e-3);
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** The result's lines but the date and the detail file's name, which differ from run to run. */
    private List<String> resultWithoutDate(String name) throws IOException {
        return Files.readAllLines(dir.resolve(name + ".json")).stream()
                .filter(l -> !l.contains("\"date\"") && !l.contains("\"infersim_detailed_file\"")).toList();
    }

    @Test
    void sameSeedAndFlagsGiveIdenticalResultsApartFromTheDate() throws IOException {
        assertEquals(0, simulate("a", 1).exitCode());
        assertEquals(0, simulate("b", 1).exitCode());
        assertEquals(0, simulate("c", 2).exitCode());

        assertEquals(resultWithoutDate("a"), resultWithoutDate("b"));
        assertArrayEquals(Files.readAllBytes(dir.resolve("a.jsonl")), Files.readAllBytes(dir.resolve("b.jsonl")));
        assertNotEquals(resultWithoutDate("a"), resultWithoutDate("c"), "another seed gives another run");
        assertEquals(300, Files.readAllLines(dir.resolve("a.jsonl")).stream().filter(l -> !l.isBlank()).count());
    }

    @Test
    void loraFlagsAndAdapterMixesRunWithTheLoraAffinityRouter() throws IOException {
        Path profile = dir.resolve("adapters.yaml");
        Files.writeString(profile, """
                name: adapters
                classes:
                  - name: chat
                    input_tokens: {distribution: uniform, low: 200, high: 400}
                    max_tokens: {distribution: uniform, low: 20, high: 60}
                    lora_adapters: [{name: sql-lora, weight: 3}, {name: chat-lora}, {name: code-lora}]
                """);
        CliRun r = run("simulate", "--workload", profile.toString(), "--num-prompts", "200", "--request-rate", "10",
                "--replicas", "2", "--router", "lora-affinity", "--enable-lora", "--max-loras", "2", "--max-cpu-loras", "3");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("Successful requests:                     200"), r.out());

        CliRun off = run("simulate", "--workload", profile.toString(), "--num-prompts", "20");
        assertEquals(2, off.exitCode(), off.out());
        assertEquals(1, off.err().trim().lines().count(), off.err());
        assertTrue(off.err().contains("--enable-lora"), off.err());
    }

    @Test
    void printsVllmSummaryBlock() {
        CliRun r = simulate("summary", 3);

        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("============ Serving Benchmark Result ============"), r.out());
        assertTrue(r.out().contains("Successful requests:                     300"), r.out());
        assertTrue(r.out().contains("Request goodput (req/s):"), r.out());
        assertTrue(r.out().contains("P99 TTFT (ms):"), r.out());
        assertTrue(r.out().contains("Server side (infersim)") && r.out().contains("Mean queue time (ms):"), r.out());
        assertTrue(r.out().contains("Saturated: no"), r.out());
    }

    @Test
    void warmupsComeOnTopOfNumPrompts() {
        CliRun r = run("simulate", "--num-prompts", "100", "--num-warmups", "20", "--request-rate", "inf",
                "--max-concurrency", "4", "--random-output-len", "16");

        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("Successful requests:                     100 "), r.out());
        assertTrue(r.out().contains("Maximum request concurrency:             4 "), r.out());
        assertTrue(r.out().contains("Saturated: no (closed loop of 4 users"), r.out());
    }

    @Test
    void savedResultCarriesVllmsPerRequestArraysForTheMeasuredRequests() throws IOException {
        CliRun r = run("simulate", "--num-prompts", "30", "--num-warmups", "5", "--request-rate", "10",
                "--random-output-len", "12", "--ignore-eos", "--save-result", "--save-detailed", "--result-dir",
                dir.toString(), "--result-filename", "v.json");

        assertEquals(0, r.exitCode(), r.err());
        JsonNode result = new ObjectMapper().readTree(dir.resolve("v.json").toFile());
        JsonNode itls = result.get("itls");
        assertEquals(30, itls.size(), "one list per measured request, warmups left out");
        assertEquals(30, result.get("ttfts").size());
        for (JsonNode gaps : itls) {
            assertEquals(11, gaps.size(), "12 tokens, 11 gaps");
        }
        JsonNode first = new ObjectMapper().readTree(Files.readAllLines(dir.resolve("v.jsonl")).stream()
                .filter(l -> l.contains("\"index\":5,")).findFirst().orElseThrow());
        double decodeS = 0;
        for (JsonNode gap : itls.get(0)) {
            decodeS += gap.asDouble();
        }
        assertEquals((first.get("e2el_ms").asDouble() - first.get("ttft_ms").asDouble()) / 1e3, decodeS, 1e-9,
                "request 5, the first measured: its gaps span its first to its last token");
        assertEquals(first.get("ttft_ms").asDouble() / 1e3, result.get("ttfts").get(0).asDouble(), 1e-12);
    }

    @Test
    void withoutARateFlagAWorkloadProfileRunsAtItsOwnRateOrTheDefault() {
        CliRun own = run("simulate", "--workload", "matrix-row-a", "--num-prompts", "20");
        CliRun unset = run("simulate", "--workload", "chat", "--num-prompts", "50");

        assertEquals(0, own.exitCode(), own.err());
        assertTrue(own.out().contains("Request rate configured (RPS):           1.00"), own.out());
        assertEquals(0, unset.exitCode(), unset.err());
        assertTrue(unset.out().contains("Successful requests:                     50 "), unset.out());
        assertTrue(unset.out().contains("Request rate configured (RPS):           10.00"), "chat sets no rate: " + unset.out());
    }

    @Test
    void replaysATraceAtItsOwnTimestampsWithoutARateFlag() throws IOException {
        Path trace = dir.resolve("trace.jsonl");
        Files.writeString(trace, """
                {"timestamp_ms": 500, "input_len": 812, "output_len": 16}
                {"timestamp_ms": 537.5, "input_len": 2048, "output_len": 9}
                {"timestamp_ms": 2500, "input_len": 100, "output_len": 4}
                """);
        CliRun r = run("simulate", "--dataset-name", "trace", "--dataset-path", trace.toString(), "--save-detailed",
                "--result-dir", dir.toString(), "--result-filename", "t.json");

        assertEquals(0, r.exitCode(), r.err());
        List<JsonNode> rows = DetailRows.read(dir.resolve("t.jsonl"));
        assertEquals(List.of(812, 2048, 100), rows.stream().map(n -> n.get("input_len").asInt()).toList());
        assertEquals(List.of(16, 9, 4), rows.stream().map(n -> n.get("output_len").asInt()).toList());
        assertEquals(List.of(0.0, 0.0375, 2.0), rows.stream().map(n -> n.get("scheduled_time_s").asDouble()).toList(),
                "arrivals at the trace's timestamps, taken from its first line");
        assertOneLineError(run("simulate", "--dataset-name", "trace", "--dataset-path", trace.toString(), "--request-rate", "5"),
                "--request-rate");
    }

    @Test
    void aTraceUnderAConcurrencyCapStillArrivesAtItsTimestamps() throws IOException {
        Path trace = dir.resolve("capped.jsonl");
        Files.writeString(trace, """
                {"timestamp_ms": 0, "input_len": 812, "output_len": 16}
                {"timestamp_ms": 5000, "input_len": 100, "output_len": 4}
                """);
        CliRun r = run("simulate", "--dataset-name", "trace", "--dataset-path", trace.toString(), "--max-concurrency", "1",
                "--save-detailed", "--result-dir", dir.toString(), "--result-filename", "capped.json");

        assertEquals(0, r.exitCode(), r.err());
        List<Double> starts = DetailRows.read(dir.resolve("capped.jsonl")).stream().map(n -> n.get("scheduled_time_s").asDouble())
                .toList();
        assertEquals(List.of(0.0, 5.0), starts, "the cap limits requests in flight; it does not send the trace early");
    }

    @Test
    void aProfileWithBothARateAndARampIsOneLineNamingTheFile() throws IOException {
        Path profile = Files.writeString(dir.resolve("ramped.yaml"), """
                name: ramped
                load:
                  request_rate: 5
                  ramp_up_strategy: linear
                  ramp_up_start_rps: 1
                  ramp_up_end_rps: 3
                classes:
                  - name: a
                    input_tokens: 10
                    max_tokens: 10
                """);

        assertOneLineError(run("simulate", "--workload", profile.toString()), "ramped.yaml");
    }

    @Test
    void warmupsThatLeaveNothingToMeasureAreOneLineNamingTheFlag() throws IOException {
        Path trace = Files.writeString(dir.resolve("short.jsonl"), """
                {"timestamp_ms": 0, "input_len": 100, "output_len": 4}
                {"timestamp_ms": 10, "input_len": 100, "output_len": 4}
                """);

        assertOneLineError(run("simulate", "--dataset-name", "trace", "--dataset-path", trace.toString(), "--num-warmups", "2"),
                "--num-warmups");
        assertOneLineError(run("simulate", "--num-prompts", "20", "--warmup-duration", "1000"), "--warmup-duration");
    }

    @Test
    void badFlagsFailWithOneLineNamingTheFlag() {
        assertOneLineError(run("simulate", "--request-rate", "fast"), "--request-rate");
        assertOneLineError(run("simulate", "--goodput", "ttfb:5"), "--goodput");
        assertOneLineError(run("simulate", "--percentile-metrics", "ttft,latency"), "--percentile-metrics");
        assertOneLineError(run("simulate", "--metric-percentiles", "99,101"), "--metric-percentiles");
        assertOneLineError(run("simulate", "--metric-percentiles", ","), "--metric-percentiles");
        assertOneLineError(run("simulate", "--percentile-metrics", ","), "--percentile-metrics");
        assertOneLineError(run("simulate", "--goodput", "ttft:200", "ttft:100"), "--goodput");
        assertOneLineError(run("simulate", "--num-prompts", "0"), "--num-prompts");
        assertOneLineError(run("simulate", "--router", "random"), "--router");
        assertOneLineError(run("simulate", "--max-num-seqs", "0"), "--max-num-seqs");
        assertOneLineError(run("simulate", "--num-warmups", "-1"), "--num-warmups");
        assertOneLineError(run("simulate", "--dataset-name", "sonnet"), "--dataset-name");
        assertOneLineError(run("simulate", "--burstiness", "0"), "--burstiness");
        assertOneLineError(run("simulate", "--max-concurrency", "-1"), "--max-concurrency");
        assertOneLineError(run("simulate", "--eos-mean-tokens", "0.5"), "--eos-mean-tokens");
        assertOneLineError(run("simulate", "--random-input-len", "0"), "--random-input-len");
        assertOneLineError(run("simulate", "--dataset-name", "prefix_repetition", "--prefix-repetition-order", "lifo"),
                "--prefix-repetition-order");
        assertOneLineError(run("simulate", "--ramp-up-strategy", "step", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "2"),
                "--ramp-up-strategy");
        assertOneLineError(run("simulate", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "5", "--ramp-up-end-rps", "2"),
                "--ramp-up-start-rps");
        assertOneLineError(run("simulate", "--ramp-up-end-rps", "20"), "--ramp-up-strategy");
        assertOneLineError(run("simulate", "--workload", "chat", "--dataset-name", "random"), "--dataset-name");
    }

    @Test
    void aDatasetPathWithTheRandomDatasetIsRefusedNotIgnored() throws IOException {
        Path file = Files.writeString(dir.resolve("conversations.json"), "[]");
        List<String[]> commands = List.of(
                new String[] {"simulate", "--num-prompts", "5"},
                new String[] {"simulate", "--num-prompts", "5", "--dataset-name", "random"},
                new String[] {"predict"},
                new String[] {"bench", "--model", "m", "--base-url", "http://127.0.0.1:9"},
                new String[] {"sweep", "--model", "m", "--base-url", "http://127.0.0.1:9", "--request-rates", "1,2"});
        for (String[] command : commands) {
            List<String> args = new ArrayList<>(List.of(command));
            args.addAll(List.of("--dataset-path", file.toString()));
            CliRun r = run(args.toArray(String[]::new));
            assertEquals(2, r.exitCode(), String.join(" ", args) + ": " + r.out() + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertTrue(r.err().contains("--dataset-path") && r.err().contains("random"), r.err());
        }
    }

    @Test
    void aRampWritesVllmsRampKeysAfterTheTrafficKeys() throws IOException {
        CliRun r = run("simulate", "--num-prompts", "20", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1",
                "--ramp-up-end-rps", "8", "--save-result", "--result-dir", dir.toString(), "--result-filename", "ramp.json");

        assertEquals(0, r.exitCode(), r.err());
        JsonNode result = new ObjectMapper().readTree(dir.resolve("ramp.json").toFile());
        List<String> keys = new ArrayList<>();
        result.fieldNames().forEachRemaining(keys::add);
        assertEquals(List.of("max_concurrency", "ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps", "duration"),
                keys.subList(keys.indexOf("max_concurrency"), keys.indexOf("duration") + 1));
        assertEquals("linear", result.get("ramp_up_strategy").asText());
        assertEquals(1.0, result.get("ramp_up_start_rps").asDouble());
        assertEquals(8.0, result.get("ramp_up_end_rps").asDouble());
    }

    @Test
    void aRampsDefaultFileNameIsVllms() throws IOException {
        Path results = dir.resolve("ramp-results");
        CliRun r = run("simulate", "--num-prompts", "20", "--ramp-up-strategy", "exponential", "--ramp-up-start-rps", "1",
                "--ramp-up-end-rps", "8", "--save-result", "--result-dir", results.toString());

        assertEquals(0, r.exitCode(), r.err());
        try (var files = Files.list(results)) {
            String name = files.findFirst().orElseThrow().getFileName().toString();
            assertTrue(name.startsWith("infersim-ramp-up-exponential-1qps-8qps-Llama-3.1-8B-Instruct-"), name);
        }
    }

    @Test
    void aResultDirThatCannotBeCreatedIsOneLineBeforeTheRun() throws IOException {
        Path file = Files.writeString(dir.resolve("plain-file"), "");
        String under = file.resolve("results").toString();

        assertOneLineError(run("simulate", "--num-prompts", "10", "--save-result", "--result-dir", under), "--result-dir");
        assertOneLineError(run("simulate", "--num-prompts", "10", "--save-detailed", "--result-dir", under), "--result-dir");
        assertOneLineError(run("simulate", "--num-prompts", "10", "--save-result", "--result-filename", " "),
                "--result-filename");
    }

    @Test
    void autoscaledRunReportsReplicasOverTimeGpuSecondsAndCost() throws IOException {
        CliRun r = run("simulate", "--num-prompts", "3000", "--random-input-len", "1024", "--random-output-len", "128",
                "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "2", "--ramp-up-end-rps", "60",
                "--router", "least-outstanding-requests", "--autoscaler", "hpa", "--autoscale-metric",
                "num_requests_running", "--autoscale-target", "16", "--max-replicas", "6", "--startup-delay", "20",
                "--metrics-lag", "0", "--dollars-per-gpu-hour", "2", "--goodput", "ttft:500", "--save-result",
                "--result-dir", dir.toString(), "--result-filename", "scaled.json", "--html", dir.resolve("scaled.html").toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(Files.readString(dir.resolve("scaled.html")).contains("\"infersim_replicas\""), "the report carries the series");
        assertTrue(r.out().contains("Autoscaler hpa: "), r.out());
        JsonNode result = new ObjectMapper().readTree(dir.resolve("scaled.json").toFile());
        JsonNode replicas = result.get("infersim_replicas");
        int last = replicas.get("desired").size() - 1;
        assertTrue(replicas.get("desired").get(last).asInt() > 1, replicas.toString());
        assertEquals(replicas.get("time_s").size(), replicas.get("ready").size());
        double gpuSeconds = result.get("infersim_gpu_seconds").asDouble();
        assertTrue(gpuSeconds > result.get("duration").asDouble(), "more than one replica for part of the run");
        assertEquals(gpuSeconds / 3600 * 2, result.get("infersim_cost_dollars").asDouble(), 1e-9);
        JsonNode overTime = result.get("infersim_latency_over_time");
        assertEquals(overTime.get("time_s").size(), overTime.get("slo_attainment").size());
        assertTrue(overTime.get("slo_attainment").get(0).asDouble() > 0.9, overTime.toString());
    }

    @Test
    void autoscalerFlagsAreCheckedWithOneLine() {
        assertOneLineError(run("simulate", "--num-prompts", "10", "--autoscaler", "hpa", "--max-replicas", "3"),
                "--autoscale-target");
        assertOneLineError(run("simulate", "--num-prompts", "10", "--autoscaler", "hpa", "--autoscale-target", "4"),
                "--max-replicas");
        assertOneLineError(run("simulate", "--num-prompts", "10", "--autoscaler", "keda", "--autoscale-target", "4",
                "--max-replicas", "3"), "--autoscaler");
        assertOneLineError(run("simulate", "--num-prompts", "10", "--autoscaler", "hpa", "--autoscale-target", "4",
                "--max-replicas", "3", "--autoscale-metric", "gpu_util"), "--autoscale-metric");
        assertOneLineError(run("simulate", "--num-prompts", "10", "--autoscaler", "hpa", "--autoscale-target", "4",
                "--max-replicas", "3", "--scale-up-policy", "pods:4"), "--scale-up-policy");
        assertOneLineError(run("simulate", "--num-prompts", "10", "--autoscaler", "hpa", "--autoscale-target", "4",
                "--max-replicas", "3", "--startup-delay", "soon"), "--startup-delay");
        assertOneLineError(run("simulate", "--num-prompts", "10", "--dollars-per-gpu-hour", "-1"), "--dollars-per-gpu-hour");
    }

    private static void assertOneLineError(CliRun r, String flag) {
        assertEquals(2, r.exitCode(), r.out() + r.err());
        String err = r.err().strip();
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.contains(flag), err);
    }

    @Test
    void multiStepRoundsRunOnTheEarlierEngineInSimulateOnly() {
        String[] v0 = {"--engine", "vllm-v0", "--num-prompts", "20", "--request-rate", "inf", "--random-input-len", "64",
                "--random-output-len", "32", "--ignore-eos"};
        CliRun rounds = run(concat(concat(new String[] {"simulate"}, v0), "--num-scheduler-steps", "8"));
        assertEquals(0, rounds.exitCode(), rounds.err());
        assertTrue(rounds.out().contains("Successful requests:                     20"), rounds.out());

        CliRun v1 = run("simulate", "--num-prompts", "20", "--num-scheduler-steps", "8");
        assertEquals(2, v1.exitCode(), v1.out());
        assertEquals(1, v1.err().strip().lines().count(), v1.err());
        assertTrue(v1.err().contains("--num-scheduler-steps 8") && v1.err().contains("--engine vllm-v0"), v1.err());

        CliRun predict = run("predict", "--engine", "vllm-v0", "--num-prompts", "20", "--request-rate", "5",
                "--num-scheduler-steps", "8");
        assertEquals(2, predict.exitCode(), predict.out());
        assertEquals(1, predict.err().strip().lines().count(), predict.err());
        assertTrue(predict.err().contains("--num-scheduler-steps 8"), predict.err());
    }
}
