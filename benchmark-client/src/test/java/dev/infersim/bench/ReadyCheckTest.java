package dev.infersim.bench;

import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.report.BenchResult;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.ResultJson;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The initial test request waits for a server that is not ready yet, as vLLM's {@code --ready-check-timeout-sec}: a
 * front door with no ready replica answers 503 until one has loaded, and the run must start once it has,
 * not fail at once. A failure that will not heal (here a 429) ends the run at the first attempt.
 */
class ReadyCheckTest {

    private static BenchConfig config(String baseUrl, long readyCheckMillis) {
        return new BenchConfig(baseUrl, "/v1/completions", "m", null, true, 10_000, 1_000_000_000L, 0, GoodputSlo.NONE,
                List.of("ttft"), List.of(50.0), 4, null, 100, false, Map.of(), 0, false, readyCheckMillis);
    }

    private static Workload workload() {
        return Workload.open(WorkloadSpec.builder().numPrompts(3).randomInputLen(16).randomOutputLen(2)
                .requestRate(Double.POSITIVE_INFINITY).seed(1).build());
    }

    private static String error(BenchResult r) {
        return r.tree().path("infersim_error").asText(null);
    }

    @Test
    void aServerThatAnswers503WhileItLoadsIsWaitedFor() {
        try (FakeStreamingServer server = new FakeStreamingServer(1, 1, 1, 0, 0, 0);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), 10_000))) {
            server.unreadyThrough.set(2);
            BenchResult r = client.run(workload(), 0, 0, 0, ResultJson.mapper().createObjectNode());
            assertEquals(null, error(r), r.tree().toString());
            assertEquals(3, r.result().totals().completed());
            assertEquals(2 + 1 + 3, server.received.get(), "two refused test requests, the one that passed, the run");
        }
    }

    @Test
    void aServerStillNotReadyAtTheTimeoutEndsTheRunSayingSo() {
        try (FakeStreamingServer server = new FakeStreamingServer(1, 1, 1, 0, 0, 0);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), 700))) {
            server.unreadyThrough.set(Long.MAX_VALUE);
            BenchResult r = client.run(workload(), 0, 0, 0, ResultJson.mapper().createObjectNode());
            String error = error(r);
            assertTrue(error != null && error.contains("http_503") && error.contains("--ready-check-timeout-sec"), error);
            assertTrue(server.received.get() >= 2, "retried before giving up: " + server.received.get());
        }
    }

    @Test
    void aFailureThatWillNotHealIsNotRetried() {
        try (FakeStreamingServer server = new FakeStreamingServer(1, 1, 1, 0, 0, 0);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), 10_000))) {
            server.failFrom.set(1);
            BenchResult r = client.run(workload(), 0, 0, 0, ResultJson.mapper().createObjectNode());
            assertTrue(error(r) != null && error(r).contains("http_429"), error(r));
            assertEquals(1, server.received.get());
        }
    }

    @Test
    void noReadyCheckSendsTheTestRequestOnce() {
        try (FakeStreamingServer server = new FakeStreamingServer(1, 1, 1, 0, 0, 0);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), 0))) {
            server.unreadyThrough.set(1);
            BenchResult r = client.run(workload(), 0, 0, 0, ResultJson.mapper().createObjectNode());
            assertTrue(error(r) != null && error(r).contains("http_503") && !error(r).contains("attempts"), error(r));
            assertEquals(1, server.received.get());
        }
    }
}
