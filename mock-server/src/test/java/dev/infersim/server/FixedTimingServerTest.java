package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.TruncatedNormal;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.json.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --timing fixed} on the real clock, checked in the ground truth each response carries (model time, which the
 * engine sets, so wall-clock noise cannot blur it): every request's TTFT and gaps are the settings, whatever runs beside
 * it, up to max-num-seqs at once; a request beyond that starts exactly when a slot frees.
 */
class FixedTimingServerTest {
    private MockServer server;

    @AfterEach
    void stop() throws Exception {
        TestServers.close(server);
    }

    private static String body(int i, int maxTokens) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"request " + i + "\"}],\"max_tokens\":" + maxTokens
                + ",\"ignore_eos\":true,\"stream\":true,\"infersim\":{\"token_times\":true}}";
    }

    /** Sends {@code n} streams at once; returns each one's ground truth (its first choice, model time). */
    private List<JsonNode> concurrentStreams(int n, int maxTokens) {
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        var http = TestServers.http();
        for (int i = 0; i < n; i++) {
            HttpRequest req = HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/chat/completions"))
                    .timeout(Duration.ofSeconds(60)).header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body(i, maxTokens))).build();
            sent.add(http.sendAsync(req, HttpResponse.BodyHandlers.ofString()));
        }
        List<JsonNode> truths = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> f : sent) {
            String[] events = f.join().body().split("\n\n");
            try {
                truths.add(Json.MAPPER.readTree(events[events.length - 2].substring(6)).at("/infersim/choices/0/model"));
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        }
        return truths;
    }

    private static double[] gapsMs(JsonNode truth) {
        JsonNode t = truth.get("token_times_ms");
        double[] gaps = new double[t.size() - 1];
        for (int k = 1; k < t.size(); k++) {
            gaps[k - 1] = t.get(k).asDouble() - t.get(k - 1).asDouble();
        }
        return gaps;
    }

    @Test
    void maxNumSeqsStreamsGetExactlyTheSetTtftAndGapsAndTheNextStartsWhenASlotFrees() throws Exception {
        // time scale 2: half a second of wall time per request, so the nine requests overlap even on a loaded machine
        server = TestServers.start(TestServers.options(TestServers.llama8b(8), 2).fixedTiming(FixedTiming.of(100, 50)).build());
        List<JsonNode> truths = concurrentStreams(9, 20);
        List<Double> finishes = new ArrayList<>();
        for (JsonNode t : truths) {
            finishes.add(t.get("finished_ms").asDouble());
        }
        int queued = 0;
        for (JsonNode t : truths) {
            assertEquals(100, t.get("prefill_time_ms").asDouble(), 1e-6, "TTFT after scheduling: " + t);
            for (double gap : gapsMs(t)) {
                assertEquals(50, gap, 1e-6, "gap: " + t);
            }
            double queue = t.get("queue_time_ms").asDouble();
            if (queue > 0) {
                queued++;
                double scheduled = t.get("scheduled_ms").asDouble();
                assertTrue(finishes.stream().anyMatch(f -> Math.abs(f - scheduled) < 1e-6),
                        "a queued request starts as another finishes: " + t);
            }
        }
        assertEquals(1, queued, "with 8 slots, exactly one of 9 overlapping requests waits");
    }

    /**
     * Every gap is drawn when the token before it leaves, so gaps are exact samples whatever the machine does. A first
     * token can only be late (its due time passed while the engine thread lagged behind the wall clock, which at time
     * scale 50 a pause of a few ms does), so TTFT is checked by its median, which a few late ones barely move; the
     * engine's own test checks its mean and spread exactly.
     */
    @Test
    void jitterHasTheConfiguredMeanAndSpreadInGroundTruth() throws Exception {
        FixedTiming timing = new FixedTiming(100, 20, 50, 10, 0, 1);
        server = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).fixedTiming(timing).build());
        List<Double> ttft = new ArrayList<>();
        List<Double> gaps = new ArrayList<>();
        for (int round = 0; round < 10; round++) {
            for (JsonNode t : concurrentStreams(8, 60)) {
                ttft.add(t.get("prefill_time_ms").asDouble());
                for (double g : gapsMs(t)) {
                    gaps.add(g);
                }
            }
        }
        assertMoments("ITL", gaps, 50, 10);
        ttft.sort(null);
        double median = (ttft.get(ttft.size() / 2 - 1) + ttft.get(ttft.size() / 2)) / 2;
        // the sample median's standard error is sqrt(pi / 2) sigma / sqrt(n); truncation at 0 is 5 sigma away
        assertEquals(100, median, 4 * Math.sqrt(Math.PI / 2) * 20 / Math.sqrt(ttft.size()), "TTFT median " + ttft);
    }

    /** Sample mean and standard deviation within 4 standard errors of the truncated normal's. */
    private static void assertMoments(String what, List<Double> xs, double mu, double sigma) {
        double mean = xs.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
        double var = xs.stream().mapToDouble(x -> (x - mean) * (x - mean)).sum() / (xs.size() - 1);
        double sd = Math.sqrt(TruncatedNormal.variance(mu, sigma));
        assertEquals(TruncatedNormal.mean(mu, sigma), mean, 4 * sd / Math.sqrt(xs.size()), what + " mean");
        assertEquals(sd, Math.sqrt(var), 4 * sd / Math.sqrt(2.0 * xs.size()), what + " sd");
    }
}
