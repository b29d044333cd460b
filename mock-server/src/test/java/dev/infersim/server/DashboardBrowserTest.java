package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The live dashboard in a real headless Chromium while load runs: the page connects, its charts draw, the numbers it
 * shows change as requests come and go, and once the load is over they agree with /metrics; opened on a server under
 * steady load, its Little's law check is right (green) at once, and a reader sees no label cut or covered. A screenshot
 * of that page is left at {@code target/dashboard.png}.
 */
class DashboardBrowserTest {

    @Test
    void dashboardUpdatesLiveAndAgreesWithMetrics(@TempDir Path dir) throws Exception {
        assumeTrue(HeadlessBrowser.available(), HeadlessBrowser.BINARY + " is not installed");
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(64), 2).dashboard(true).build());
        try (HeadlessBrowser browser = new HeadlessBrowser(dir.resolve("profile"))) {
            browser.open(server.baseUrl() + "/dashboard");
            browser.waitFor(() -> browser.eval("window.dashboard.updates").asInt() >= 2, Duration.ofSeconds(20),
                    () -> "the first snapshots");

            int updatesBefore = browser.eval("window.dashboard.updates").asInt();
            List<CompletableFuture<HttpResponse<String>>> load = sendLoad(server, 120);
            for (CompletableFuture<HttpResponse<String>> f : load) {
                assertEquals(200, f.get().statusCode(), f.get().body());
            }
            browser.waitFor(() -> browser.eval("window.dashboard.last.replicas[0].finished").asInt() == 120,
                    Duration.ofSeconds(30), () -> "the page to count all 120 requests finished; it shows "
                            + browser.eval("JSON.stringify(window.dashboard.last.replicas[0].finished)").asText());
            // each request runs for seconds and the page samples twice a second: it must have seen them running
            assertTrue(browser.eval("window.dashboard.peakRunning").asInt() > 0, "the page showed requests running");
            assertTrue(browser.eval("window.dashboard.updates").asInt() > updatesBefore + 4, "updates came during the load");
            String metrics = TestServers.get(server, "/metrics").raw().body();
            JsonNode shown = browser.eval("window.dashboard.last.replicas[0]");
            assertEquals(sum(metrics, "vllm:request_success_total"), shown.get("finished").asDouble());
            assertEquals(sum(metrics, "vllm:num_requests_running"), shown.get("running").asDouble());
            assertEquals(sum(metrics, "vllm:time_to_first_token_seconds_count"), total(shown.get("ttft").get("count")));
            assertEquals(sum(metrics, "vllm:inter_token_latency_seconds_count"), total(shown.get("itl").get("count")));
            assertEquals("120", browser.eval("document.querySelector('#replicas td.finished').textContent").asText(),
                    "the table on the page shows the same count");
            int drawn = browser.eval("document.querySelectorAll('#c-queue svg path, #c-ttft svg path').length").asInt();
            assertTrue(drawn > 10, "the charts drew their series (" + drawn + " paths)");
            assertEquals(List.of(), PageLayout.problems(browser), "what a reader would see wrong");
            assertEquals("token gaps per decade", browser.eval("charts.itl.getOption().yAxis[0].name").asText(),
                    "the ITL histogram counts token gaps, not requests");
        } finally {
            TestServers.close(server);
        }
    }

    /**
     * Under steady load (30-token completions, Poisson arrivals 40 ms apart on average in wall time, each over in a
     * fraction of a second), a page
     * opened after the load has run a while shows Little's law holding within 10 s: the server kept its ten-second
     * window whether or not anyone looked, so the page never starts from a stale one. L is well above the 0.5 under
     * which the check passes trivially.
     */
    @Test
    @Tag("wallclock") // a deadline on a real load
    void littlesLawIsGreenWithinTenSecondsOfOpeningUnderSteadyLoad(@TempDir Path dir) throws Exception {
        assumeTrue(HeadlessBrowser.available(), HeadlessBrowser.BINARY + " is not installed");
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(64), 2).dashboard(true).build());
        HttpClient http = TestServers.http();
        ScheduledExecutorService load = Executors.newSingleThreadScheduledExecutor();
        try (HeadlessBrowser browser = new HeadlessBrowser(dir.resolve("profile"))) {
            String body = "{\"model\":\"llama-3.1-8b\",\"prompt\":\"a steady stream\",\"max_tokens\":30,"
                    + "\"ignore_eos\":true,\"stream\":true}";
            // Poisson arrivals: a fixed period would alias with the page's twice-a-second samples and bias L
            SplittableRandom gaps = new SplittableRandom(29);
            Runnable send = new Runnable() {
                @Override
                public void run() {
                    http.sendAsync(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/completions"))
                            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(), HttpResponse.BodyHandlers.discarding());
                    load.schedule(this, (long) (-40_000 * Math.log(1 - gaps.nextDouble())), TimeUnit.MICROSECONDS);
                }
            };
            load.execute(send);
            Thread.sleep(12_000); // the load runs before anyone looks
            browser.open(server.baseUrl() + "/dashboard");
            String cell = "document.querySelector('#replicas tr[data-replica=\"0\"] td:last-child')";
            browser.waitFor(() -> browser.eval("window.dashboard.updates").asInt() > 0
                            && "ok".equals(browser.eval(cell + ".className").asText()), Duration.ofSeconds(10),
                    () -> "Little's law to hold on the page; it shows L " + browser.eval("JSON.stringify(window.dashboard.last"
                            + " && window.dashboard.last.replicas[0].little)").asText() + " as "
                            + browser.eval(cell + " && " + cell + ".className").asText());
            JsonNode little = browser.eval("window.dashboard.last.replicas[0].little");
            assertTrue(little.get("L").asDouble() > 0.5, "a real check, not the trivial one: " + little);
            assertTrue(little.get("window_s").asDouble() >= 9, "a full window at once: " + little);
            assertTrue(browser.eval("window.dashboard.updates").asInt() < 25, "within 10 s: the first updates did it");
            Thread.sleep(1_500); // a few more points on every chart
            assertEquals(List.of(), PageLayout.problems(browser), "what a reader would see wrong");
            browser.screenshot(Path.of("target", "dashboard.png"));
        } finally {
            load.shutdownNow();
            TestServers.close(server);
        }
        assertTrue(Files.size(Path.of("target", "dashboard.png")) > 10_000, "a screenshot was written");
    }

    /** n completions of 1,000 tokens (seconds each) at about 40 a second (wall), streamed, so they overlap. */
    private static List<CompletableFuture<HttpResponse<String>>> sendLoad(MockServer server, int n) throws Exception {
        HttpClient http = TestServers.http();
        List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String body = "{\"model\":\"llama-3.1-8b\",\"prompt\":\"hello number " + i + "\",\"max_tokens\":1000,"
                    + "\"ignore_eos\":true,\"stream\":true}";
            all.add(http.sendAsync(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/completions"))
                    .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString()));
            Thread.sleep(25);
        }
        return all;
    }

    /** The sum of a metric's samples over all label sets in a Prometheus text exposition. */
    private static double sum(String exposition, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*\\} (\\S+)$").matcher(exposition);
        double total = 0;
        boolean found = false;
        while (m.find()) {
            total += Double.parseDouble(m.group(1));
            found = true;
        }
        assertTrue(found, name + " is not in /metrics");
        return total;
    }

    private static double total(JsonNode counts) {
        double t = 0;
        for (JsonNode c : counts) {
            t += c.asDouble();
        }
        return t;
    }
}
