package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.StartupDelay;
import dev.infersim.server.fleet.FrontDoor;
import dev.infersim.server.fleet.MockFleet;
import dev.infersim.sim.TieBreak;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.sim.ReplicaSeries;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One autoscaler, two clocks: a ramp driven through {@code infersim autoscale} against a mock fleet running 5x faster
 * than real time (with the HPA's sync period scaled to 5 s, and one replica added per sync at most), and through the
 * simulator with the same policy, scale the fleet alike. The live fleet is {@code serve --router
 * least-outstanding-requests}: its front door routes every request, and spreads the ramp over the replicas the
 * autoscaler adds, with the router the simulator uses.
 */
@Tag("wallclock") // a live ramp's scaling decisions against the simulator's
class AutoscaleAgreesWithSimulationTest {
    private static final double TIME_SCALE = 5;
    private static final double STARTUP_S = 10;
    private static final int PROMPTS = 630;
    private static final long SYNC_S = 5;
    private static final Deployment DEPLOYMENT =
            Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();

    @TempDir
    Path dir;

    /** 1 -> 12 req/s over 60 s, then held for 20 s; 300 output tokens each, so requests run for seconds. */
    private Workload ramp() throws IOException {
        Path profile = dir.resolve("ramp.yaml");
        Files.writeString(profile, """
                name: ramp
                load:
                  ramp_up_strategy: linear
                  ramp_up_start_rps: 1
                  ramp_up_end_rps: 12
                  ramp_up_duration_s: 60
                classes:
                  - {name: long, input_tokens: 256, max_tokens: 300}
                """);
        return Workload.open(WorkloadSpec.builder().datasetName("workload").workloadProfile(profile.toString())
                .numPrompts(PROMPTS).ignoreEos(true).seed(5).build());
    }

    @Test
    void liveAndSimulatedReplicaCountsAgreeWithinOne() throws Exception {
        Workload workload = ramp();
        long durationNanos = 0;
        for (WorkloadRequest w : workload) {
            durationNanos = w.arrivalNanos();
        }
        String durationS = Long.toString((long) Math.ceil(durationNanos / 1e9));
        ServerOptions options = ServerOptions.builder(DEPLOYMENT).port(0).timeScale(TIME_SCALE).eventLoops(1)
                .startupDelay(StartupDelay.ofSeconds(STARTUP_S)).build();
        FrontDoor door = FrontDoor.start(options, 1, Duration.ofSeconds(5), s -> { }, "least-outstanding-requests",
                TieBreak.ROUND_ROBIN).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        MockFleet fleet = door.fleet();
        Map<Integer, AtomicInteger> perReplica = new ConcurrentHashMap<>();
        Path timeline = dir.resolve("live.json");
        Path trace = dir.resolve("arrivals.jsonl");
        long firstArrivalNanos;
        try {
            fleet.replicas().get(0).loaded().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            // A run too short for any sync loads the command's classes, so the real one starts its clock at once.
            CliRun warm = CliRun.of("autoscale", "--fleet", door.baseUrl(), "--autoscale-target", "10",
                    "--max-replicas", "6", "--time-scale", Double.toString(TIME_SCALE), "--duration", "1");
            assertEquals(0, warm.exitCode(), warm.err());
            CompletableFuture<CliRun> live = CompletableFuture.supplyAsync(() -> CliRun.of("autoscale",
                    "--fleet", door.baseUrl(), "--autoscale-metric", "num_requests_running", "--autoscale-target", "8",
                    "--max-replicas", "6", "--sync-period", "5", "--scale-up-policy", "pods=1/5", "--time-scale", Double.toString(TIME_SCALE), "--duration", durationS,
                    "--timeline-file", timeline.toString()));
            List<Double> arrivalsMs = drive(workload, door, options.servedModelName(), perReplica);
            CliRun run = live.get(60, TimeUnit.SECONDS);
            assertEquals(0, run.exitCode(), run.out() + run.err());
            assertTrue(run.out().contains(": recommends "), "every sync says why it decided: " + run.out());
            assertEquals(PROMPTS, arrivalsMs.size(), "every request answered 200");
            writeTrace(arrivalsMs, trace);
            firstArrivalNanos = Math.round(arrivalsMs.stream().mapToDouble(Double::doubleValue).min().orElseThrow() * 1e6);
        } finally {
            door.close(Duration.ofSeconds(5)).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }

        ReplicaSeries simulated = simulate(trace);
        JsonNode liveReplicas = new ObjectMapper().readTree(timeline.toFile()).get("infersim_replicas");
        JsonNode times = liveReplicas.get("time_s");
        JsonNode desired = liveReplicas.get("desired");
        int livePeak = 0;
        StringBuilder both = new StringBuilder();
        for (long t = SYNC_S; t <= durationNanos / 1e9; t += SYNC_S) {
            int liveDesired = stepValue(times, desired, t);
            livePeak = Math.max(livePeak, liveDesired);
            both.append(t).append(" s: live ").append(liveDesired).append(", simulated ")
                    .append(simulated.desiredAt(Math.max(0, t * 1_000_000_000L - firstArrivalNanos))).append("; ");
        }
        // A trace starts at its first arrival: the simulated clock runs that much behind the live one.
        // Within one replica, allowing either timeline to run up to one cold start ahead of the other.
        long lagNanos = (long) (STARTUP_S * 1e9);
        for (long t = SYNC_S; t <= durationNanos / 1e9; t += SYNC_S) {
            int liveDesired = stepValue(times, desired, t);
            int closest = Integer.MAX_VALUE;
            for (long s = t * 1_000_000_000L - lagNanos; s <= t * 1_000_000_000L + lagNanos; s += 1_000_000_000L) {
                closest = Math.min(closest, Math.abs(liveDesired - simulated.desiredAt(Math.max(0, s - firstArrivalNanos))));
            }
            assertTrue(closest <= 1, "at " + t + " s: " + both);
        }
        assertTrue(livePeak >= 3, "the ramp needs several replicas: " + both);
        for (int r = 0; r < livePeak; r++) {
            int served = perReplica.getOrDefault(r, new AtomicInteger()).get();
            assertTrue(served >= PROMPTS / 20, "the front door spreads the ramp over every replica added: " + perReplica);
        }
        assertTrue(simulated.desired(simulated.size() - 1) >= 3, "the ramp needs several replicas: " + both);
    }

    /**
     * The replica counts {@code simulate} gives for the same requests, policy and cold start. The requests arrive at the
     * times the mock stamped them (in model time), so the live side's send jitter on a busy machine is no difference.
     */
    private ReplicaSeries simulate(Path trace) throws IOException {
        CliRun r = CliRun.of("simulate", "--dataset-name", "trace", "--dataset-path", trace.toString(), "--ignore-eos",
                "--router", "least-outstanding-requests", "--autoscaler", "hpa", "--autoscale-metric", "num_requests_running",
                "--autoscale-target", "8", "--max-replicas", "6", "--sync-period", Long.toString(SYNC_S),
                "--scale-up-policy", "pods=1/5", "--startup-delay", Double.toString(STARTUP_S), "--metrics-lag", "0",
                "--save-result", "--result-dir", dir.toString(), "--result-filename", "simulated.json");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        JsonNode replicas = new ObjectMapper().readTree(dir.resolve("simulated.json").toFile()).get("infersim_replicas");
        ReplicaSeries series = new ReplicaSeries();
        for (int i = 0; i < replicas.get("time_s").size(); i++) {
            series.record(Math.round(replicas.get("time_s").get(i).asDouble() * 1e9), replicas.get("ready").get(i).asInt(),
                    replicas.get("desired").get(i).asInt());
        }
        return series;
    }

    /** A trace of the stamped arrivals, 256 prompt and 300 output tokens each, as the profile's requests. */
    private static void writeTrace(List<Double> arrivalsMs, Path trace) throws IOException {
        List<Double> sorted = new ArrayList<>(arrivalsMs);
        sorted.sort(null);
        StringBuilder b = new StringBuilder();
        for (double ms : sorted) {
            b.append("{\"timestamp_ms\": ").append(ms).append(", \"input_len\": 256, \"output_len\": 300}\n");
        }
        Files.writeString(trace, b);
    }

    private static int stepValue(JsonNode times, JsonNode values, double t) {
        int v = values.get(0).asInt();
        for (int i = 0; i < times.size() && times.get(i).asDouble() <= t; i++) {
            v = values.get(i).asInt();
        }
        return v;
    }

    /**
     * Sends each request at its arrival time (scaled to wall time) to the front door, counting the requests each replica
     * served; returns the arrival time the mock stamped on each request answered 200, in model ms from the start.
     */
    private static List<Double> drive(Workload workload, FrontDoor door, String model, Map<Integer, AtomicInteger> perReplica)
            throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        List<Double> arrivalsMs = java.util.Collections.synchronizedList(new ArrayList<>());
        ObjectMapper json = new ObjectMapper();
        List<CompletableFuture<?>> replies = new ArrayList<>();
        double startEpochMs = System.currentTimeMillis();
        long start = System.nanoTime();
        for (WorkloadRequest w : workload) {
            long due = start + (long) (w.arrivalNanos() / TIME_SCALE);
            for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                LockSupport.parkNanos(wait);
            }
            String body = "{\"model\":\"" + model + "\",\"prompt\":" + Arrays.toString(w.promptTokenIds(100_000))
                    + ",\"max_tokens\":" + w.maxTokens() + ",\"ignore_eos\":true}";
            HttpRequest request = HttpRequest.newBuilder(URI.create(door.baseUrl() + "/v1/completions"))
                    .header("content-type", "application/json").timeout(Duration.ofSeconds(60))
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build();
            replies.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).handle((r, e) -> {
                if (e == null && r.statusCode() == 200) {
                    try {
                        JsonNode truth = json.readTree(r.body()).path("infersim");
                        perReplica.computeIfAbsent(truth.path("replica").asInt(), k -> new AtomicInteger()).incrementAndGet();
                        double wallMs = truth.path("choices").path(0).path("wall").path("arrival_ms").asDouble();
                        arrivalsMs.add((wallMs - startEpochMs) * TIME_SCALE);
                    } catch (IOException bad) {
                        throw new java.io.UncheckedIOException(bad);
                    }
                }
                return null;
            }));
        }
        CompletableFuture.allOf(replies.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
        return arrivalsMs;
    }
}
