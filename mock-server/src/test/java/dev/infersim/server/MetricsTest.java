package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.json.Json;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** /metrics speaks vLLM's names and buckets, passes promtool, and a real Prometheus can scrape and query it. */
class MetricsTest {
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(16), 20).build());
    private static String text;

    @BeforeAll
    static void start() throws Exception {
        TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":\"hello\",\"max_tokens\":5,\"ignore_eos\":true}");
        TestServers.post(SERVER.get(), "/v1/completions", "{\"prompt\":\"hello\",\"max_tokens\":3,\"ignore_eos\":true}");
        text = TestServers.get(SERVER.get(), "/metrics").raw().body();
    }

    private static String sample(String nameAndLabels) {
        return text.lines().filter(l -> l.startsWith(nameAndLabels + " ")).findFirst()
                .map(l -> l.substring(nameAndLabels.length() + 1)).orElseThrow(() -> new AssertionError(nameAndLabels + " missing:\n" + text));
    }

    @Test
    void countersAndHistogramsUseVllmNamesLabelsAndBuckets() {
        String labels = "{engine=\"0\",model_name=\"llama-3.1-8b\"}";
        assertEquals("8.0", sample("vllm:generation_tokens_total" + labels));
        assertEquals("2.0", sample("vllm:prompt_tokens_total" + labels));
        assertEquals("2.0", sample("vllm:request_success_total{engine=\"0\",model_name=\"llama-3.1-8b\",finished_reason=\"length\"}"));
        assertEquals("2.0", sample("vllm:e2e_request_latency_seconds_count" + labels));
        assertEquals("0.0", sample("vllm:num_requests_running" + labels));
        assertEquals("2.0", sample("vllm:time_to_first_token_seconds_bucket{engine=\"0\",model_name=\"llama-3.1-8b\",le=\"2560.0\"}"));
        assertEquals("6.0", sample("vllm:inter_token_latency_seconds_count" + labels));
        assertTrue(text.contains("# TYPE vllm:request_generation_tokens histogram"));
        assertTrue(text.contains("vllm:request_generation_tokens_bucket{engine=\"0\",model_name=\"llama-3.1-8b\",le=\"5.0\"} 2.0"));
        assertTrue(text.contains("vllm:request_time_per_output_token_seconds_bucket{engine=\"0\",model_name=\"llama-3.1-8b\",le=\"0.01\"} 2.0"),
                "8B decode steps take ~7 ms of model time: both requests' mean TPOT is below 10 ms");
        assertTrue(Double.parseDouble(sample("infersim:steps_total" + labels)) >= 6);
        assertTrue(text.contains("# TYPE infersim:step_lag_seconds histogram"));
    }

    @Test
    void jvmAndProcessMetricsComeFromMicrometerBesideVllms() {
        assertTrue(Double.parseDouble(sample("process_resident_memory_bytes")) > 1e6, "the name vLLM's Python client uses");
        assertTrue(Double.parseDouble(sample("process_open_fds")) > 0);
        assertTrue(text.contains("# TYPE jvm_memory_used_bytes gauge"), text);
        assertTrue(text.contains("jvm_gc_pause_seconds") || text.contains("jvm_gc_memory_allocated_bytes_total"), text);
        assertTrue(text.contains("# TYPE jvm_threads_live_threads gauge"), text);
    }

    @Test
    void promtoolParsesTheExpositionWithOnlyVllmNamingLints() throws Exception {
        Assumptions.assumeTrue(available("promtool"), "promtool not installed (apt-get install prometheus); skipping");
        Process p = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true).start();
        p.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        // Exit 3 = lint findings only; 1 would be a parse error. vLLM's own names break two lints, which we keep.
        assertTrue(p.exitValue() == 0 || p.exitValue() == 3, out);
        for (String line : out.split("\n")) {
            assertTrue(line.isBlank() || line.endsWith("metric names should not contain ':'")
                    || line.equals("vllm:iteration_tokens_total non-counter metrics should not have \"_total\" suffix"), line);
        }
    }

    @Test
    void realPrometheusScrapesAndAnswersAQueryForRunningRequests(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(available("prometheus"), "prometheus not installed (apt-get install prometheus); skipping");
        int port = FreePorts.one();
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                scrape_configs:
                  - job_name: infersim
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """.formatted(SERVER.get().port()));
        Process prometheus = new ProcessBuilder("prometheus", "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port).redirectErrorStream(true).redirectOutput(dir.resolve("log").toFile()).start();
        try {
            String query = "http://127.0.0.1:" + port + "/api/v1/query?query="
                    + URLEncoder.encode("vllm:num_requests_running{model_name=\"llama-3.1-8b\"}", StandardCharsets.UTF_8);
            // One client for the whole wait: its keep-alive connection is reused. A client per poll would leave one
            // idle connection open per poll, and Prometheus stops accepting at --web.max-connections (512).
            HttpClient client = prometheusClient();
            JsonNode result = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline && (result == null || result.size() != 1)) {
                try {
                    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(query)).timeout(java.time.Duration.ofSeconds(10)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    result = Json.MAPPER.readTree(r.body()).at("/data/result");
                } catch (IOException e) {
                    result = null; // not listening yet, or not ready (503 body is not the API's JSON)
                }
                Thread.sleep(100);
            }
            assertTrue(result != null && result.size() == 1,
                    "no answer; scrape targets: " + targets(client, port) + "\nlog:\n" + Files.readString(dir.resolve("log")));
            assertEquals("0", result.at("/0/value/1").asText());
            assertEquals("infersim", result.at("/0/metric/job").asText());
        } finally {
            prometheus.destroy();
            prometheus.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Plain HTTP/1.1 for Prometheus's API: no cleartext HTTP/2 upgrade offer, which Java's client makes by default. */
    private static HttpClient prometheusClient() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(java.time.Duration.ofSeconds(5)).build();
    }

    /** Prometheus's view of its scrape targets (health, last error), for a failure message. */
    private static String targets(HttpClient client, int port) {
        try {
            return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/targets"))
                    .timeout(java.time.Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (Exception e) {
            return "unavailable (" + e + ")";
        }
    }

    private static boolean onPath(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }

    /** Whether the binary is on the PATH; under .ci/run (INFERSIM_REQUIRE_PROMETHEUS set) its absence is a failure. */
    private static boolean available(String binary) {
        boolean found = onPath(binary);
        if (!found && System.getenv("INFERSIM_REQUIRE_PROMETHEUS") != null) {
            throw new AssertionError(binary + " must be installed for this run (.ci/run installs the prometheus package)");
        }
        return found;
    }
}
