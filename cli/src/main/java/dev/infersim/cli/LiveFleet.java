package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.bench.measure.MetricsScraper;
import dev.infersim.sim.AutoscaleMetric;
import dev.infersim.sim.FleetObservation;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;

/**
 * A running fleet as {@code infersim serve --replicas} exposes it: {@code GET/POST /admin/replicas} on its first port
 * lists the replicas (with their state: loading, ready, draining) and resizes the fleet, and each ready replica's
 * {@code /metrics} carries vLLM's gauges. What an HPA sees of it is read here: the replica count (serving plus
 * loading, not draining), and the metric of every ready replica whose page could be read; loading replicas, like a vLLM
 * pod whose server is not up yet, report none.
 */
final class LiveFleet {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http;
    private final URI admin;
    private final String apiKey;
    private final Duration timeout;

    /** One sync's view: what the HPA sees, the ready count, and replicas whose metrics could not be read. */
    record Snapshot(FleetObservation observation, int ready, int unreadable) {
    }

    LiveFleet(String baseUrl, String apiKey, Duration timeout) {
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
        this.admin = URI.create(baseUrl.replaceAll("/+$", "") + "/admin/replicas");
        this.apiKey = apiKey;
        this.timeout = timeout;
    }

    /** The fleet's {@code /admin/replicas} answer. */
    JsonNode describe() throws IOException, InterruptedException {
        return send(request(admin).GET().build(), admin);
    }

    /** Reads the replica list, then the metric of every ready replica. */
    Snapshot observe(AutoscaleMetric metric) throws IOException, InterruptedException {
        JsonNode fleet = describe();
        int current = fleet.path("replicas").asInt(-1);
        if (current < 0) {
            throw new IOException(admin + " answered without a replica count: " + fleet);
        }
        double[] values = new double[current];
        int reported = 0;
        int ready = 0;
        int unreadable = 0;
        for (JsonNode endpoint : fleet.path("endpoints")) {
            if (!"ready".equals(endpoint.path("state").asText())) {
                continue;
            }
            ready++;
            Double value = scrape(URI.create(endpoint.path("url").asText() + "/metrics"), metric);
            if (value == null) {
                unreadable++;
            } else if (reported < values.length) {
                values[reported++] = value;
            }
        }
        return new Snapshot(new FleetObservation(current, Arrays.copyOf(values, reported), current - reported), ready,
                unreadable);
    }

    /** Sets the replica count. */
    void scaleTo(int replicas) throws IOException, InterruptedException {
        HttpRequest post = request(admin).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"replicas\": " + replicas + "}")).build();
        send(post, admin);
    }

    /** The metric summed over the page's series (one per engine), or null when the page cannot be read. */
    private Double scrape(URI metrics, AutoscaleMetric metric) throws InterruptedException {
        try {
            HttpResponse<String> r = http.send(request(metrics).GET().build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? MetricsScraper.parse(r.body()).get(metric.prometheusName()) : null;
        } catch (IOException e) {
            return null; // a replica that went away between the listing and its scrape reports nothing
        }
    }

    private HttpRequest.Builder request(URI uri) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(timeout);
        return apiKey == null ? b : b.header("authorization", "Bearer " + apiKey);
    }

    private JsonNode send(HttpRequest request, URI uri) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException(request.method() + " " + uri + " answered " + r.statusCode() + ": "
                    + r.body().lines().findFirst().orElse(""));
        }
        return JSON.readTree(r.body());
    }
}
