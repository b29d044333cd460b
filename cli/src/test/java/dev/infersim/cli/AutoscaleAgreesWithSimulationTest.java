package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.StartupDelay;
import dev.infersim.server.MockFleet;
import dev.infersim.server.MockServer;
import dev.infersim.server.ServerOptions;
import dev.infersim.sim.AutoscaleMetric;
import dev.infersim.sim.AutoscalerSpec;
import dev.infersim.sim.Autoscalers;
import dev.infersim.sim.Fleet;
import dev.infersim.sim.LeastOutstandingRequestsRouter;
import dev.infersim.sim.Replica;
import dev.infersim.sim.ReplicaSeries;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import dev.infersim.workload.WorkloadSpec;
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
 * than real time (with the HPA's sync period scaled to 5 s), and through the simulator with the same policy, scale the fleet alike. The live side routes each
 * request to the ready replica with the fewest requests outstanding, as {@code least-outstanding-requests} does.
 */
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
        MockFleet fleet = MockFleet.start(options, 1, Duration.ofSeconds(5), s -> { })
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        Path timeline = dir.resolve("live.json");
        try {
            fleet.replicas().get(0).loaded().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            // A run too short for any sync loads the command's classes, so the real one starts its clock at once.
            CliRun warm = CliRun.of("autoscale", "--fleet", fleet.baseUrl(), "--autoscale-target", "10",
                    "--max-replicas", "6", "--time-scale", Double.toString(TIME_SCALE), "--duration", "1");
            assertEquals(0, warm.exitCode(), warm.err());
            CompletableFuture<CliRun> live = CompletableFuture.supplyAsync(() -> CliRun.of("autoscale",
                    "--fleet", fleet.baseUrl(), "--autoscale-metric", "num_requests_running", "--autoscale-target", "8",
                    "--max-replicas", "6", "--sync-period", "5", "--time-scale", Double.toString(TIME_SCALE), "--duration", durationS,
                    "--timeline-file", timeline.toString()));
            int[] statuses = drive(workload, fleet, options.servedModelName());
            CliRun run = live.get(60, TimeUnit.SECONDS);
            assertEquals(0, run.exitCode(), run.out() + run.err());
            assertEquals(PROMPTS, statuses[0], "every request answered 200: " + Arrays.toString(statuses));
        } finally {
            fleet.close(Duration.ofSeconds(5)).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }

        ReplicaSeries simulated = simulate(workload);
        JsonNode liveReplicas = new ObjectMapper().readTree(timeline.toFile()).get("infersim_replicas");
        JsonNode times = liveReplicas.get("time_s");
        JsonNode desired = liveReplicas.get("desired");
        int livePeak = 0;
        StringBuilder both = new StringBuilder();
        for (long t = SYNC_S; t <= durationNanos / 1e9; t += SYNC_S) {
            int liveDesired = stepValue(times, desired, t);
            livePeak = Math.max(livePeak, liveDesired);
            both.append(t).append(" s: live ").append(liveDesired).append(", simulated ")
                    .append(simulated.desiredAt(t * 1_000_000_000L)).append("; ");
        }
        // Within one replica, allowing either timeline to run up to one cold start ahead of the other.
        long lagNanos = (long) (STARTUP_S * 1e9);
        for (long t = SYNC_S; t <= durationNanos / 1e9; t += SYNC_S) {
            int liveDesired = stepValue(times, desired, t);
            int closest = Integer.MAX_VALUE;
            for (long s = t * 1_000_000_000L - lagNanos; s <= t * 1_000_000_000L + lagNanos; s += 1_000_000_000L) {
                closest = Math.min(closest, Math.abs(liveDesired - simulated.desiredAt(Math.max(0, s))));
            }
            assertTrue(closest <= 1, "at " + t + " s: " + both);
        }
        assertTrue(livePeak >= 3, "the ramp needs several replicas: " + both);
        assertTrue(simulated.desired(simulated.size() - 1) >= 3, "the ramp needs several replicas: " + both);
    }

    /** The simulator's replica counts for the same workload, policy and cold start. */
    private static ReplicaSeries simulate(Workload workload) {
        AutoscalerSpec spec = AutoscalerSpec.of(AutoscaleMetric.NUM_REQUESTS_RUNNING, 8, 1, 6)
                .withSyncPeriodNanos(SYNC_S * 1_000_000_000L);
        Fleet fleet = new Fleet(new Replica[] {new Replica(0, EngineCore.create(DEPLOYMENT))},
                () -> EngineCore.create(DEPLOYMENT), Autoscalers.byName("hpa", spec), StartupDelay.ofSeconds(STARTUP_S), 0);
        new Simulation(fleet, new LeastOutstandingRequestsRouter(), SimulationOptions.defaults(), null).run(workload);
        return fleet.series();
    }

    private static int stepValue(JsonNode times, JsonNode values, double t) {
        int v = values.get(0).asInt();
        for (int i = 0; i < times.size() && times.get(i).asDouble() <= t; i++) {
            v = values.get(i).asInt();
        }
        return v;
    }

    /**
     * Sends each request at its arrival time (scaled to wall time) to the ready replica with the fewest requests
     * outstanding; returns {answered 200, other}.
     */
    private static int[] drive(Workload workload, MockFleet fleet, String model) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        Map<Integer, AtomicInteger> outstanding = new ConcurrentHashMap<>();
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        List<CompletableFuture<?>> replies = new ArrayList<>();
        long start = System.nanoTime();
        for (WorkloadRequest w : workload) {
            long due = start + (long) (w.arrivalNanos() / TIME_SCALE);
            for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                LockSupport.parkNanos(wait);
            }
            MockServer target = null;
            for (MockServer s : fleet.replicas()) {
                if (s.state() == MockServer.State.READY && (target == null
                        || count(outstanding, s) < count(outstanding, target))) {
                    target = s;
                }
            }
            AtomicInteger counter = outstanding.computeIfAbsent(target.replica(), k -> new AtomicInteger());
            counter.incrementAndGet();
            String body = "{\"model\":\"" + model + "\",\"prompt\":" + Arrays.toString(w.promptTokenIds(100_000))
                    + ",\"max_tokens\":" + w.maxTokens() + ",\"ignore_eos\":true}";
            HttpRequest request = HttpRequest.newBuilder(URI.create(target.baseUrl() + "/v1/completions"))
                    .header("content-type", "application/json").timeout(Duration.ofSeconds(60))
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build();
            replies.add(http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).handle((r, e) -> {
                counter.decrementAndGet();
                (e == null && r.statusCode() == 200 ? ok : failed).incrementAndGet();
                return null;
            }));
        }
        CompletableFuture.allOf(replies.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
        return new int[] {ok.get(), failed.get()};
    }

    private static int count(Map<Integer, AtomicInteger> outstanding, MockServer s) {
        AtomicInteger c = outstanding.get(s.replica());
        return c == null ? 0 : c.get();
    }
}
