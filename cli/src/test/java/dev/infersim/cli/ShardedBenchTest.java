package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.result.RequestLogReader;
import dev.infersim.result.RequestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A distributed benchmark on one machine: two shards of one seeded workload started at the same instant against the
 * in-process mock, merged, and checked against the concatenated raw per-request data and an unsharded run.
 */
class ShardedBenchTest {
    private static final int PROMPTS = 30;
    @RegisterExtension
    static final InProcessMock MOCK = new InProcessMock();

    @TempDir
    Path dir;

    private String[] bench(String name, String... more) {
        List<String> args = new ArrayList<>(List.of("bench", "--base-url", MOCK.server().baseUrl(), "--model",
                MOCK.server().options().servedModelName(), "--num-prompts", String.valueOf(PROMPTS), "--request-rate", "30",
                "--random-input-len", "64", "--random-output-len", "8", "--random-range-ratio", "0.5", "--ignore-eos",
                "--seed", "11", "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,99",
                "--max-send-lag-ms", "1000", "--save-result", "--save-detailed", "--result-dir", dir.toString(),
                "--result-filename", name));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    @Test
    void twoShardsMergeIntoTheUnshardedRunWithPercentilesOfAllTheirSamples() throws Exception {
        // The unsharded run first: it also loads the client's classes, so that the shards set up in time for the start.
        CliRun whole = CliRun.of(bench("whole.json"));
        assertEquals(0, whole.exitCode(), whole.out() + whole.err());
        String startAt = String.valueOf(System.currentTimeMillis() + 10_000);
        // Main.run directly: CliRun captures System.out one run at a time, and the shards must run together.
        CompletableFuture<Integer> shard0 = CompletableFuture.supplyAsync(
                () -> Main.run(bench("s0.json", "--shard", "0/2", "--start-at", startAt)));
        CompletableFuture<Integer> shard1 = CompletableFuture.supplyAsync(
                () -> Main.run(bench("s1.json", "--shard", "1/2", "--start-at", startAt)));
        assertEquals(0, shard0.get(60, TimeUnit.SECONDS));
        assertEquals(0, shard1.get(60, TimeUnit.SECONDS));
        assertTrue(Files.isRegularFile(dir.resolve("s0.hlog")) && Files.isRegularFile(dir.resolve("s1.hlog")));

        CliRun merge = CliRun.of("merge", dir.resolve("s0.json").toString(), dir.resolve("s1.json").toString(),
                "--save-result", "--result-dir", dir.toString(), "--result-filename", "merged.json",
                "--html", dir.resolve("merged.html").toString());
        assertEquals(0, merge.exitCode(), merge.out() + merge.err());

        List<RequestRecord> s0 = rows("s0.jsonl");
        List<RequestRecord> s1 = rows("s1.jsonl");
        assertTrue(s0.stream().allMatch(r -> r.index() % 2 == 0) && s1.stream().allMatch(r -> r.index() % 2 == 1),
                "every other request to each shard");
        List<RequestRecord> raw = new ArrayList<>(s0);
        raw.addAll(s1);
        assertEquals(schedule(rows("whole.jsonl")), schedule(raw),
                "the shards send the unsharded run's requests, each at its time from the common start");

        ObjectMapper json = new ObjectMapper();
        JsonNode merged = json.readTree(dir.resolve("merged.json").toFile());
        assertEquals(PROMPTS, merged.get("completed").asLong());
        assertEquals(PROMPTS, merged.get("num_prompts").asLong());
        assertEquals(0, merged.get("failed").asLong());
        assertEquals(raw.stream().mapToLong(RequestRecord::outputTokens).sum(), merged.get("total_output_tokens").asLong());
        assertEquals(2, merged.get("infersim_shards").size(), "each shard's own numbers are kept");
        assertTrue(merged.get("infersim_shards").get(1).has("infersim_send_lag_ms"));
        assertTrue(merged.get("infersim_send_lag_ms").get("samples").asLong() == PROMPTS);

        checkMetric(merged, "ttft", raw, RequestRecord::ttftNanos);
        checkMetric(merged, "e2el", raw, RequestRecord::e2elNanos);
        checkMetric(merged, "tpot", raw.stream().filter(r -> r.outputTokens() > 1).toList(), RequestRecord::tpotNanos);

        double d0 = json.readTree(dir.resolve("s0.json").toFile()).get("duration").asDouble();
        double d1 = json.readTree(dir.resolve("s1.json").toFile()).get("duration").asDouble();
        double duration = merged.get("duration").asDouble();
        assertTrue(duration >= Math.max(d0, d1) - 1e-9 && duration <= d0 + d1, "the union of the windows: " + duration);
        assertEquals(PROMPTS / duration, merged.get("request_throughput").asDouble(), 1e-9);
        assertTrue(Files.readString(dir.resolve("merged.html")).contains("infersim benchmark report"));

        // a shard flagged invalid makes the merged run invalid: exit code 3, and the line says which shard and why
        String second = Files.readString(dir.resolve("s1.json"));
        assertTrue(second.contains("\"infersim_valid\" : true") && second.contains("\"infersim_invalid_reasons\" : [ ]"),
                second);
        Files.writeString(dir.resolve("bad.json"), second.replace("\"infersim_valid\" : true", "\"infersim_valid\" : false")
                .replace("\"infersim_invalid_reasons\" : [ ]", "\"infersim_invalid_reasons\" : [ \"a planted reason\" ]"));
        Files.copy(dir.resolve("s1.hlog"), dir.resolve("bad.hlog"));
        CliRun invalid = CliRun.of("merge", dir.resolve("s0.json").toString(), dir.resolve("bad.json").toString());
        assertEquals(3, invalid.exitCode(), invalid.out() + invalid.err());
        assertTrue(invalid.out().contains("INVALID merged run (exit code 3): shard ") && invalid.out()
                .contains(": a planted reason"), invalid.out());

        CliRun missing = CliRun.of("merge", dir.resolve("s1.json").toString());
        assertEquals(2, missing.exitCode());
        assertTrue(missing.err().strip().lines().count() == 1 && missing.err().contains("shard 0/2 is missing"),
                missing.err());
    }

    /** The merged percentiles are those of all the raw samples within HdrHistogram's precision; the mean is exact. */
    private static void checkMetric(JsonNode merged, String metric, List<RequestRecord> raw,
                                    ToLongFunction<RequestRecord> nanos) {
        double[] ms = raw.stream().mapToDouble(r -> nanos.applyAsLong(r) / 1e6).sorted().toArray();
        assertEquals(Arrays.stream(ms).average().orElseThrow(), merged.get("mean_" + metric + "_ms").asDouble(),
                1e-9 * ms[ms.length - 1], metric + " mean");
        for (int p : new int[] {50, 90, 99}) {
            double exact = ms[(int) Math.ceil(p / 100.0 * ms.length) - 1]; // the nearest rank, as HdrHistogram ranks
            double value = merged.get("p" + p + "_" + metric + "_ms").asDouble();
            assertTrue(value >= exact - 1e-9 && value <= exact * 1.001, metric + " p" + p + ": merged " + value
                    + " ms, raw " + exact + " ms");
        }
    }

    private List<RequestRecord> rows(String file) {
        List<RequestRecord> rows = new ArrayList<>();
        new RequestLogReader(dir.resolve(file)).forEach(false, row -> rows.add(row.record()));
        return rows;
    }

    /** Each request's index, time and lengths. */
    private static Map<Long, List<Long>> schedule(List<RequestRecord> rows) {
        Map<Long, List<Long>> out = new TreeMap<>();
        rows.forEach(r -> out.put(r.index(), List.of(r.scheduledNanos(), (long) r.promptTokens(), (long) r.outputTokens())));
        return out;
    }
}
