package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.fleet.MockFleet;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench --validate} through real gateways, each finding with a planted fault where it must be named and a
 * healthy case where it must not: HAProxy at its default (no {@code option http-no-delay}) coalesces tokens
 * at 5 req/s with the replicas at {@code --time-scale 0.25}, named with and without {@code --baseline-url}, and not
 * with http-no-delay; nginx and HAProxy that retry a replica's 429 or 503 at once on the next replica are named by the
 * replicas' own count of each request's attempts, and not when they pass the refusal on; and a client starved of CPU
 * with no gateway at all is never taken for one.
 */
class ValidateThroughGatewaysTest {
    private static final int REPLICAS = 3;
    private static MockFleet fleet;
    private static List<Integer> ports;

    @TempDir
    static Path dir;

    @BeforeAll
    static void startFleet() throws Exception {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(8).build();
        fleet = MockFleet.start(ServerOptions.builder(d).port(0).timeScale(0.25).eventLoops(1).build(), REPLICAS,
                Duration.ofSeconds(5), s -> { }).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        ports = fleet.replicas().stream().map(MockServer::port).toList();
    }

    @AfterAll
    static void stopFleet() throws Exception {
        Gateway.stop(fleet);
    }

    /** {@code bench --validate} against {@code baseUrl}: its result, after printing its findings. */
    private static JsonNode bench(String name, String baseUrl, String rate, String prompts, String outputLen,
                                  String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("bench", "--base-url", baseUrl, "--model", "llama-3.1-8b",
                "--random-input-len", "64", "--random-output-len", outputLen, "--ignore-eos", "--num-prompts", prompts,
                "--request-rate", rate, "--seed", Integer.toString(Math.abs(name.hashCode() % 1000)), "--validate",
                "--client-warmups", "16", "--max-failure-rate", "1", "--save-result", "--result-dir", dir.toString(),
                "--result-filename", name + ".json"));
        args.addAll(List.of(more));
        CliRun run = CliRun.of(args.toArray(String[]::new));
        // 3: the run is invalid (on a busy machine, the client's own timing), which is not what is judged here
        assertTrue(run.exitCode() == 0 || run.exitCode() == 3, run.out() + run.err());
        System.out.println(name + ": " + run.out().lines().filter(l -> l.startsWith("Finding")).toList());
        return new ObjectMapper().readTree(dir.resolve(name + ".json").toFile());
    }

    private static List<String> findings(JsonNode result) {
        List<String> names = new ArrayList<>();
        result.get("infersim_findings").forEach(f -> names.add(f.get("name").asText()));
        return names;
    }

    private static String baseline() {
        return "http://127.0.0.1:" + ports.get(1);
    }

    /**
     * HAProxy's default asks the kernel to hold small writes: tokens the replicas write 26 ms apart reach the client in
     * bunches. Named per token with and without a direct baseline; without one the replicas' own TTFT at the wire is
     * the baseline, so the first token's hold is named too.
     */
    @Test
    @Tag("wallclock") // real gateway, real clock: 5 s runs
    void haproxyAtItsDefaultIsNamedCoalescingAtFiveRequestsASecondWithAndWithoutABaseline() throws Exception {
        Gateway.assumeInstalled(Gateway.Kind.HAPROXY);
        try (Gateway haproxy = Gateway.start(Gateway.Kind.HAPROXY, false, ports, dir.resolve("haproxy-default"), false)) {
            JsonNode alone = bench("haproxy-default", haproxy.baseUrl(), "5", "25", "32");
            assertTrue(findings(alone).contains("token_coalescing"), alone.get("infersim_findings").toString());
            JsonNode pairs = alone.at("/infersim_ground_truth/token_pairs");
            assertTrue(pairs.get("coalesced").asLong() * 2 > pairs.get("judged").asLong(), pairs.toString());
            JsonNode withBaseline = bench("haproxy-default-baseline", haproxy.baseUrl(), "5", "25", "32",
                    "--baseline-url", baseline());
            assertTrue(findings(withBaseline).contains("token_coalescing"), withBaseline.get("infersim_findings").toString());
        }
    }

    @Test
    @Tag("wallclock") // "nothing found" on a real clock
    void haproxyWithHttpNoDelayPassesTokensOnAndNothingIsNamed() throws Exception {
        Gateway.assumeInstalled(Gateway.Kind.HAPROXY);
        try (Gateway haproxy = Gateway.start(Gateway.Kind.HAPROXY, false, ports, dir.resolve("haproxy-no-delay"), true)) {
            JsonNode r = bench("haproxy-no-delay", haproxy.baseUrl(), "5", "25", "32");
            assertEquals(List.of(), findings(r), r.get("infersim_findings").toString());
            JsonNode pairs = r.at("/infersim_ground_truth/token_pairs");
            assertTrue(pairs.get("coalesced").asLong() * 20 < pairs.get("judged").asLong(), pairs.toString());
        }
    }

    /**
     * The last replica refuses everything with {@code status} (the first answers the client's initial test request);
     * the gateway retries each refusal at once on the next replica:
     * every request succeeds, and the replicas' count of attempts names the retries. The same gateway passing the
     * refusals on names none (the client sees them as failures).
     */
    private static void retriedRefusalsAreNamed(Gateway.Kind kind, int status, String fault) throws Exception {
        String faults = "http://127.0.0.1:" + ports.get(REPLICAS - 1) + "/admin/faults";
        GatewayTest.post(faults, "{\"failure_rate\": 1.0, \"failure_types\": [\"" + fault + "\"]}");
        String name = kind.name().toLowerCase(java.util.Locale.ROOT) + "-" + status;
        try {
            try (Gateway retrying = Gateway.retryingRefusals(kind, status, true, ports, dir.resolve(name + "-retry"))) {
                JsonNode r = bench(name + "-retry", retrying.baseUrl(), "20", "30", "4");
                assertEquals(30, r.get("completed").asInt(), r.toString());
                assertTrue(findings(r).contains("hidden_retries"), r.get("infersim_findings").toString());
                JsonNode retried = r.get("infersim_findings").get(findings(r).indexOf("hidden_retries"));
                assertTrue(retried.at("/evidence/requests").asLong() >= 5, retried.toString());
            }
            try (Gateway passing = Gateway.retryingRefusals(kind, status, false, ports, dir.resolve(name + "-pass"))) {
                JsonNode r = bench(name + "-pass", passing.baseUrl(), "20", "30", "4");
                assertTrue(r.get("failed").asInt() > 0, "the refusals reach the client: " + r);
                assertFalse(findings(r).contains("hidden_retries"), r.get("infersim_findings").toString());
            }
        } finally {
            GatewayTest.post(faults, "{\"failure_rate\": 0}");
        }
    }

    @Test
    void anNginxInstantRetryOfA429IsNamed() throws Exception {
        Gateway.assumeInstalled(Gateway.Kind.NGINX);
        retriedRefusalsAreNamed(Gateway.Kind.NGINX, 429, "rate_limit");
    }

    @Test
    void anHaproxyRetryOfA503IsNamed() throws Exception {
        Gateway.assumeInstalled(Gateway.Kind.HAPROXY);
        retriedRefusalsAreNamed(Gateway.Kind.HAPROXY, 503, "service_unavailable");
    }

    /**
     * No gateway, a client starved of CPU: twice as many spinning threads as cores hold the client's event loops off
     * their CPUs for tens of milliseconds at a time. Its reads come late and in bunches, but its own accounts say so:
     * no finding blames a gateway.
     */
    @Test
    @Tag("wallclock") // a loaded machine, on purpose
    void aClientStarvedOfCpuWithNoGatewayIsNotTakenForOne() throws Exception {
        List<Thread> hogs = new ArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean hogging = new java.util.concurrent.atomic.AtomicBoolean(true);
        for (int i = 0; i < 2 * Runtime.getRuntime().availableProcessors(); i++) {
            Thread t = new Thread(() -> {
                while (hogging.get()) {
                    long until = System.nanoTime() + 20_000_000;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
                }
            }, "cpu-hog-" + i);
            t.setDaemon(true);
            t.start();
            hogs.add(t);
        }
        JsonNode r;
        try {
            r = bench("starved-direct", baseline(), "5", "25", "32");
        } finally {
            hogging.set(false);
            for (Thread t : hogs) {
                t.join();
            }
        }
        List<String> blamed = findings(r).stream().filter(f -> List.of("token_coalescing", "gateway_latency",
                "retried_or_queued", "hidden_retries").contains(f)).toList();
        assertEquals(List.of(), blamed, r.get("infersim_findings") + " " + r.at("/infersim_ground_truth"));
        assertTrue(r.at("/infersim_read_delay_ms/p99").asDouble() > 1, "the client was starved: "
                + r.at("/infersim_read_delay_ms"));
    }
}
