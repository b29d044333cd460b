package dev.infersim.server;

import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --data-parallel-size}: engines behind one port, balanced as vLLM's internal load balancer, one /metrics. */
class DataParallelTest {
    private static MockServer server;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(TestServers.options(TestServers.llama8b(8), 5).dataParallelSize(3).build());
    }

    @AfterAll
    static void stop() throws Exception {
        TestServers.close(server);
    }

    @Test
    void concurrentRequestsSpreadOverEnginesAndMetricsLabelEachEngine() throws Exception {
        // Six long requests, each sent once the one before runs: each goes to the engine with the lowest
        // waiting x 4 + running, ties to the lowest rank, so they take engines 0, 1, 2, 0, 1, 2.
        List<CompletableFuture<TestServers.Reply>> replies = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            replies.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return TestServers.post(server, "/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":1000,\"ignore_eos\":true}");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
            int running = i + 1;
            assertTrue(TestServers.eventually(10, () -> server.runningRequests() == running));
        }
        int[] perEngine = new int[3];
        for (CompletableFuture<TestServers.Reply> f : replies) {
            TestServers.Reply r = f.get();
            assertEquals(200, r.status(), r.raw().body());
            perEngine[r.json().path("infersim").path("engine").asInt()]++;
        }
        assertEquals(List.of(2, 2, 2), List.of(perEngine[0], perEngine[1], perEngine[2]));
        for (int i = 0; i < 6; i++) {
            assertEquals(i % 3, replies.get(i).get().json().path("infersim").path("engine").asInt());
        }

        String metrics = TestServers.get(server, "/metrics").raw().body();
        for (int e = 0; e < 3; e++) {
            String series = "vllm:generation_tokens_total{engine=\"" + e + "\",model_name=\"llama-3.1-8b\"} ";
            double tokens = metrics.lines().filter(l -> l.startsWith(series)).mapToDouble(l -> Double.parseDouble(l.substring(series.length())))
                    .findFirst().orElseThrow();
            assertTrue(tokens >= 2000, series + tokens); // the other test may have pinned a short request to an engine
            assertTrue(metrics.contains("vllm:cache_config_info{") && metrics.contains("engine=\"" + e + "\"} 1.0"), metrics);
        }
        // One family header for all engines, as the exposition format requires.
        assertEquals(1, metrics.lines().filter(l -> l.equals("# TYPE vllm:num_requests_running gauge")).count());
    }

    @Test
    void dataParallelRankHeaderPinsTheEngineAndIsValidated() throws Exception {
        String body = "{\"prompt\":\"hi\",\"max_tokens\":2}";
        TestServers.Reply pinned = TestServers.post(server, "/v1/completions", body, "X-data-parallel-rank", "2");
        assertEquals(2, pinned.json().path("infersim").path("engine").asInt());
        for (String bad : new String[] {"3", "-1", "two"}) {
            TestServers.Reply r = TestServers.post(server, "/v1/completions", body, "X-data-parallel-rank", bad);
            assertEquals(400, r.status(), bad);
            assertEquals("x-data-parallel-rank", r.json().path("error").path("param").asText());
        }
    }
}
