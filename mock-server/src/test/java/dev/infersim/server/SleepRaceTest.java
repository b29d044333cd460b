package dev.infersim.server;

import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Sleep, wake-up and completions racing: 6 threads send random {@code /sleep} (each level and mode), {@code /wake_up},
 * {@code /is_sleeping} and completions (whole and streamed) without waiting for the answers, 100 rounds on one server.
 * Every operation call must be answered (a completion may wait for a wake-up: each round ends with one), every answer
 * is a 200, and the round leaves the server awake with nothing waiting. Once, a sleep in mode wait asked while another
 * waited, or a wake-up that came during the wait, dropped the earlier sleep's answer: 3 to 5 calls were never answered
 * and the engine slept on.
 */
class SleepRaceTest {
    private static final int ROUNDS = 100;
    private static final int THREADS = 6;
    private static final int CALLS_PER_THREAD = 5;

    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    @Test
    void everySleepWakeUpAndCompletionIsAnsweredWhateverTheirOrder() throws Exception {
        // time scale 1000: a level-2 wake-up (the weights read from storage) takes milliseconds of wall time
        MockServer server = SERVERS.start(TestServers.options(TestServers.llama8b(8), 1000)
                .features(ModelFeatures.NONE.withSleepMode(true, true, 3.4)).build());
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        for (int round = 0; round < ROUNDS; round++) {
            round(server, http, round);
        }
    }

    private static void round(MockServer server, HttpClient http, int round) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> operations = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> completions = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Random random = new Random(round * 1_000L + t);
            Thread thread = new Thread(() -> {
                for (int i = 0; i < CALLS_PER_THREAD; i++) {
                    int pick = random.nextInt(10);
                    if (pick < 3) {
                        String mode = List.of("abort", "wait", "keep").get(random.nextInt(3));
                        operations.add(send(http, server, "POST", "/sleep?level=" + (1 + random.nextInt(2)) + "&mode=" + mode, ""));
                    } else if (pick < 5) {
                        operations.add(send(http, server, "POST", "/wake_up", ""));
                    } else if (pick < 6) {
                        operations.add(send(http, server, "GET", "/is_sleeping", null));
                    } else {
                        completions.add(send(http, server, "POST", "/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":"
                                + (1 + random.nextInt(8)) + ",\"ignore_eos\":true,\"stream\":" + random.nextBoolean() + "}"));
                    }
                    if (random.nextBoolean()) {
                        Thread.onSpinWait();
                    }
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread t : threads) {
            t.join();
        }
        awaitAll(operations, "round " + round + ": sleep, wake-up and is_sleeping calls");
        // asked after every sleep was answered, so it comes last: whatever slept, wakes now
        assertEquals(200, send(http, server, "POST", "/wake_up", "").get(10, TimeUnit.SECONDS).statusCode());
        awaitAll(completions, "round " + round + ": completions");
        assertFalse(TestServers.get(server, "/is_sleeping").json().get("is_sleeping").asBoolean(), "round " + round + " ends awake");
        assertTrue(TestServers.eventually(5, () -> server.waitingRequests() == 0 && server.requestsInFlight() == 0),
                "round " + round + ": nothing left waiting");
    }

    private static void awaitAll(List<CompletableFuture<HttpResponse<String>>> calls, String what) throws Exception {
        try {
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            fail(what + ": " + calls.stream().filter(c -> !c.isDone()).count() + " of " + calls.size() + " unanswered after 10 s");
        }
        for (CompletableFuture<HttpResponse<String>> c : calls) {
            HttpResponse<String> r = c.join();
            assertEquals(200, r.statusCode(), what + ": " + r.request().uri() + " " + r.body());
        }
    }

    private static CompletableFuture<HttpResponse<String>> send(HttpClient http, MockServer server, String method, String path,
                                                                String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.baseUrl() + path)).timeout(Duration.ofSeconds(30))
                .header("content-type", "application/json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
