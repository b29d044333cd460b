package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.BatchShape;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.engine.StepOutcome;
import dev.infersim.engine.StepPlan;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tokens leave the server when the engine model says they are produced: the reported timeline equals an independent
 * replay of the same engine on a virtual clock, and batching stretches inter-token latency as the roofline cost model
 * predicts. How late steps end on the wall clock is a property of the machine, measured by bench/mock-server.
 */
class EngineTimingTest {
    private static final double TIME_SCALE = 10;
    private MockServer server;

    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    private static String streamBody(String content, int maxTokens) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + content + "\"}],\"max_tokens\":" + maxTokens
                + ",\"ignore_eos\":true,\"stream\":true,\"infersim\":{\"token_times\":true}}";
    }

    @Test
    void reportedTokenTimesEqualAVirtualClockReplayOfTheSameEngine() throws Exception {
        Deployment d = TestServers.llama8b(32);
        server = SERVERS.start(TestServers.options(d, TIME_SCALE).build());
        TestServers.Stream s = TestServers.stream(server, "/v1/chat/completions", streamBody("Describe the stone house", 24));
        JsonNode truth = s.events().get(s.events().size() - 2).json().at("/infersim/choices/0/model");
        long arrival = Math.round(truth.get("arrival_ms").asDouble() * 1e6);
        int[] prompt = new PromptTokenizer().applyChatTemplate(List.of(new PromptTokenizer.Message("user", "Describe the stone house")));

        EngineCore replay = EngineCore.create(d);
        EngineRequest r = new EngineRequest(0, prompt.length, prompt, 24, 0, EngineRequest.NO_EOS, 0, arrival);
        replay.submit(r);
        List<Long> expected = new ArrayList<>();
        long now = arrival;
        for (StepPlan plan; (plan = replay.planStep(now)) != null; ) {
            StepOutcome out = replay.completeStep(plan);
            now = plan.endNanos();
            for (int i = 0; i < out.tokenCount(); i++) {
                expected.add(out.endNanos());
            }
        }
        JsonNode times = truth.get("token_times_ms");
        assertEquals(24, times.size());
        for (int i = 0; i < 24; i++) {
            assertEquals(expected.get(i) / 1e6, times.get(i).asDouble(), 1e-6, "token " + i);
        }
    }

    @Test
    void everyDecodeStepUnderConcurrencyLastsWhatTheCostModelSaysForItsBatch() throws Exception {
        Deployment d = TestServers.llama8b(64);
        // In virtual time, stopped until all 32 requests are in: they arrive at one instant and share every step.
        VirtualClock clock = new VirtualClock();
        server = SERVERS.start(TestServers.options(d, 1).build(), clock);
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            sent.add(post(streamBody("request " + i, 60)));
        }
        assertTrue(TestServers.eventually(30, () -> server.requestsInFlight() == 32), "requests in: " + server.requestsInFlight());
        clock.start();
        // step end (model ns) -> the requests that got a token in that step, and the token's index
        TreeMap<Long, Map<Integer, Integer>> steps = new TreeMap<>();
        int[] promptTokens = new int[sent.size()];
        for (int r = 0; r < sent.size(); r++) {
            String[] events = sent.get(r).join().body().split("\n\n");
            JsonNode truth = Json.MAPPER.readTree(events[events.length - 2].substring(6)).at("/infersim/choices/0");
            promptTokens[r] = truth.get("prompt_tokens").asInt();
            JsonNode times = truth.at("/model/token_times_ms");
            for (int k = 0; k < times.size(); k++) {
                steps.computeIfAbsent(Math.round(times.get(k).asDouble() * 1e6), t -> new HashMap<>()).put(r, k);
            }
        }
        RooflineCostModel cost = new RooflineCostModel(d);
        Map.Entry<Long, Map<Integer, Integer>> previous = null;
        int checked = 0;
        int largestBatch = 0;
        double aloneMs = cost.stepNanos(new BatchShape().addDecode(promptTokens[0])) / 1e6;
        for (Map.Entry<Long, Map<Integer, Integer>> step : steps.entrySet()) {
            if (previous != null && step.getValue().keySet().equals(previous.getValue().keySet())) {
                // Same requests as the step before and no newcomer: a pure decode step of exactly these sequences.
                BatchShape shape = new BatchShape();
                step.getValue().forEach((r, k) -> shape.addDecode(promptTokens[r] + k - 1));
                double gapMs = (step.getKey() - previous.getKey()) / 1e6;
                assertEquals(cost.stepNanos(shape) / 1e6, gapMs, 1e-5, "decode step of " + step.getValue().size());
                largestBatch = Math.max(largestBatch, step.getValue().size());
                if (step.getValue().size() >= 8) {
                    assertTrue(gapMs > aloneMs, "a batch of 8+ must take longer than a lone decode step");
                }
                checked++;
            }
            previous = step;
        }
        assertTrue(checked >= 40, "pure decode steps checked: " + checked);
        assertEquals(32, largestBatch, "all 32 requests decode together");
    }

    private CompletableFuture<HttpResponse<String>> post(String body) {
        return TestServers.http().sendAsync(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/chat/completions"))
                .timeout(java.time.Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

}
