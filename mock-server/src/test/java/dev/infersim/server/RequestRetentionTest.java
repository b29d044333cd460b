package dev.infersim.server;

import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.model.ModelService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.ObjectName;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No per-request state outlives its request: after 10,000 requests (completions and chats, whole and streamed) a full
 * GC leaves no more live instances of any class than after the first 1,000, give or take a bound far below one per
 * request. The counts come from the JVM's class histogram (the {@code GC.class_histogram} diagnostic command, which
 * runs a full GC first). Once, each request left its {@code EventLoopBatch}, its Vert.x {@code DuplicatedContext} and
 * two {@code Choice[64]} behind: {@link ModelService} kept a batch per request context, not per event loop.
 */
class RequestRetentionTest {
    private static final int WARM_UP = 1_000;
    private static final int REQUESTS = 10_000;
    /**
     * Growth of any class's live count over the 9,000 requests after warm-up that still counts as bounded: a leak of one
     * object per request grows by 9,000. What grows once, not with the requests (about 650 strings: constants of code
     * paths first run after warm-up), stays under it.
     */
    private static final int GROWTH_BOUND = 1_000;
    /** More live instances of a class made per request after 9,000 requests than before them (event loops, connections). */
    private static final int LIVE_BOUND = 100;

    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    @Test
    void tenThousandRequestsLeaveNoInstancePerRequest() throws Exception {
        MockServer server = SERVERS.start(TestServers.options(TestServers.llama8b(64), 1000).build());
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        serve(server, http, 0, WARM_UP);
        histogram(); // the first one also sets up what taking one needs (JMX, the diagnostic command)
        // kept as text until both are taken: a parsed map would be thousands of live objects in the second
        String before = histogram();
        serve(server, http, WARM_UP, REQUESTS);
        Map<String, Long> after = liveInstances(histogram());
        Map<String, Long> start = liveInstances(before);
        List<String> grown = new ArrayList<>();
        for (Map.Entry<String, Long> e : after.entrySet()) {
            long growth = e.getValue() - start.getOrDefault(e.getKey(), 0L);
            if (growth > GROWTH_BOUND) {
                grown.add(e.getKey() + " +" + growth);
            }
        }
        assertTrue(grown.isEmpty(), "live instances grew with the requests served: " + grown);
        for (String perRequest : List.of("dev.infersim.server.engine.EventLoopBatch",
                "dev.infersim.server.api.openai.CompletionExchange", "dev.infersim.server.engine.Choice",
                "io.vertx.core.impl.DuplicatedContext")) {
            // measured from the warm-up: the servers of tests run before this one in the same JVM may still hold theirs
            long more = after.getOrDefault(perRequest, 0L) - start.getOrDefault(perRequest, 0L);
            assertTrue(more < LIVE_BOUND, perRequest + ": " + more + " more live after 9,000 requests");
        }
    }

    /** Sends requests {@code from} to {@code to}, 32 at a time, and checks each got a 200. */
    private static void serve(MockServer server, HttpClient http, int from, int to) throws Exception {
        Semaphore inFlight = new Semaphore(32);
        AtomicInteger failed = new AtomicInteger();
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (int i = from; i < to; i++) {
            inFlight.acquire();
            boolean chat = i % 2 == 0;
            boolean stream = i % 4 < 2;
            String body = chat
                    ? "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":3,\"stream\":" + stream + "}"
                    : "{\"prompt\":\"hi\",\"max_tokens\":3,\"stream\":" + stream + "}";
            HttpRequest request = HttpRequest.newBuilder(URI.create(server.baseUrl() + (chat ? "/v1/chat/completions" : "/v1/completions")))
                    .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build();
            all.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).whenComplete((r, e) -> {
                if (e != null || r.statusCode() != 200) {
                    failed.incrementAndGet();
                }
                inFlight.release();
            }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        assertEquals(0, failed.get(), "every request answered 200");
        assertTrue(TestServers.eventually(10, () -> server.requestsInFlight() == 0), "every exchange ended");
    }

    /** The class histogram of the live heap: {@code GC.class_histogram}, which runs a full GC first. */
    static String histogram() throws Exception {
        return (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
    }

    /** Live instances by class name: a histogram's {@code #instances} column. */
    static Map<String, Long> liveInstances(String histogram) {
        Map<String, Long> counts = new HashMap<>();
        for (String line : histogram.split("\n")) {
            String[] f = line.trim().split("\\s+");
            // "  12:     5000     120000  dev.infersim.server.engine.EventLoopBatch (module)"
            if (f.length >= 4 && f[0].endsWith(":") && Character.isDigit(f[0].charAt(0))) {
                counts.merge(f[3], Long.parseLong(f[1]), Long::sum);
            }
        }
        assertTrue(counts.size() > 100, "a class histogram:\n" + histogram.substring(0, Math.min(500, histogram.length())));
        return counts;
    }
}
