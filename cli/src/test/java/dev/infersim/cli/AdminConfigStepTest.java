package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.Profiles;
import dev.infersim.server.fleet.FrontDoor;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.sim.TieBreak;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * "Now make replica 1 slow", mid-run and without a restart: a bench with --validate drives two replicas behind the front
 * door (round robin, a closed loop of two users) while a test raises replica 1's TTFT from 40 to 400 ms (model time)
 * through the front door's {@code POST /admin/config?replica=1}. The console's per-replica line shows replica 1 slower, and replica 1's truth rows step from 40 to 400 ms at one point and never back, replica 0's
 * staying at 40. The change waits until replica 1 has served a few requests, so the step falls inside the run whatever
 * the machine's speed.
 */
class AdminConfigStepTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aLatencyRaisedOnOneReplicaMidRunStepsInThatReplicasOutput(@TempDir Path dir) throws Exception {
        TruthLog log = TruthLog.open(dir.resolve("truth.jsonl"), TruthLog.DEFAULT_RING_CHARS);
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(8).build();
        ServerOptions options = ServerOptions.builder(d).port(0).timeScale(1).eventLoops(2)
                .fixedTiming(FixedTiming.of(40, 10)).truthLog(log).build();
        FrontDoor door = FrontDoor.start(options, 2, Duration.ofSeconds(5), s -> { }, "round-robin", TieBreak.ROUND_ROBIN)
                .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        CliRun run;
        try {
            // a thread of its own (the common pool may be busy with the fleet's work) and a client already warm, so
            // that the change lands within a few milliseconds of replica 1's third request
            HttpClient client = HttpClient.newHttpClient();
            client.send(HttpRequest.newBuilder(URI.create(door.baseUrl() + "/admin/config?replica=1")).build(),
                    HttpResponse.BodyHandlers.ofString());
            CompletableFuture<Integer> change = new CompletableFuture<>();
            Thread changer = new Thread(() -> change.complete(raiseReplicaOnesTtft(log, door, client)));
            changer.start();
            run = CliRun.of("bench", "--base-url", door.baseUrl(), "--model", options.servedModelName(), "--num-prompts",
                    "32", "--max-concurrency", "2", "--request-rate", "inf", "--random-input-len", "16",
                    "--random-output-len", "4", "--ignore-eos", "--client-warmups", "0", "--validate");
            assertEquals(200, change.get(60, TimeUnit.SECONDS), "the front door forwarded the change to the fleet");
        } finally {
            door.close(Duration.ofSeconds(1)).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            log.close();
        }
        // --validate checked every request against the truth (the verdict itself rests on this machine's noise: a loaded
        // machine's read delays can make the client's error material, exit 3, whatever the server did)
        assertTrue(run.exitCode() == 0 || run.exitCode() == 3, run.out() + run.err());
        assertTrue(run.out().contains("TTFT error vs server"), run.out());
        Matcher perReplica = Pattern.compile("Server TTFT / queue per replica \\(ms\\): +0: ([0-9.]+)[^,]*, 1: ([0-9.]+)")
                .matcher(run.out());
        assertTrue(perReplica.find(), run.out());
        double ttft0 = Double.parseDouble(perReplica.group(1));
        double ttft1 = Double.parseDouble(perReplica.group(2));
        assertTrue(ttft1 > 1.5 * ttft0, "replica 1's mean TTFT " + ttft1 + " ms against replica 0's " + ttft0 + " ms");

        List<Double> slow = ttfts(log, dir, 1);
        int step = slow.indexOf(400.0);
        assertTrue(step >= 3, "a step after replica 1's first requests: " + slow);
        assertTrue(slow.subList(0, step).stream().allMatch(t -> t == 40.0), slow.toString());
        assertTrue(slow.subList(step, slow.size()).stream().allMatch(t -> t == 400.0), slow.toString());
        assertTrue(ttfts(log, dir, 0).stream().allMatch(t -> t == 40.0), "replica 0 unchanged");
    }

    /** Once replica 1 has served three requests, raises its TTFT through the front door; the answer's status. */
    private static int raiseReplicaOnesTtft(TruthLog log, FrontDoor door, HttpClient client) {
        try {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (rows(log, 1).size() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(door.baseUrl()
                    + "/admin/config?replica=1")).POST(HttpRequest.BodyPublishers.ofString("{\"time_to_first_token_ms\": 400}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Replica {@code replica}'s truth rows in the ring, in the order they were written. */
    private static List<JsonNode> rows(TruthLog log, int replica) throws Exception {
        List<JsonNode> rows = new ArrayList<>();
        for (String line : log.since(0, 10_000).body().split("\n")) {
            if (!line.isEmpty()) {
                JsonNode row = JSON.readTree(line);
                if (row.get("replica").asInt() == replica) {
                    rows.add(row);
                }
            }
        }
        return rows;
    }

    /** Replica {@code replica}'s model-time TTFTs (scheduling to first token), by arrival. */
    private static List<Double> ttfts(TruthLog log, Path dir, int replica) throws Exception {
        List<JsonNode> rows = new ArrayList<>();
        for (String line : java.nio.file.Files.readAllLines(dir.resolve("truth.jsonl"))) {
            JsonNode row = JSON.readTree(line);
            if (row.get("replica").asInt() == replica) {
                rows.add(row);
            }
        }
        rows.sort((a, b) -> Double.compare(a.get("model").get("arrival_ms").asDouble(), b.get("model").get("arrival_ms").asDouble()));
        return rows.stream().map(r -> r.get("model").get("prefill_time_ms").asDouble()).toList();
    }
}
