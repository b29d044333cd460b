package dev.infersim.bench.measure;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.WebClient;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Polls a Prometheus text endpoint (vLLM's {@code /metrics}) at a fixed interval during a run and keeps a timeline of
 * vllm:num_requests_running, vllm:num_requests_waiting and vllm:kv_cache_usage_perc (each summed over label sets, e.g.
 * engines). Runs on its own event loop so parsing a large metrics page never delays the measured streams. A failed
 * poll is counted, not fatal.
 */
public final class MetricsScraper {
    public static final String RUNNING = "vllm:num_requests_running";
    public static final String WAITING = "vllm:num_requests_waiting";
    public static final String KV_USAGE = "vllm:kv_cache_usage_perc";
    private static final int MAX_POINTS = 100_000;

    private final Vertx vertx;
    private final Context context;
    private final WebClient web;
    private final String url;
    private final long intervalMillis;
    private final long originNanos;
    private final List<double[]> points = new ArrayList<>();
    private long timerId = -1;
    private long failures;
    private String firstFailure;

    public MetricsScraper(Vertx vertx, String url, long intervalMillis, long originNanos) {
        this.vertx = vertx;
        this.context = vertx.getOrCreateContext();
        this.web = WebClient.create(vertx);
        this.url = url;
        this.intervalMillis = intervalMillis;
        this.originNanos = originNanos;
    }

    public void start() {
        context.runOnContext(v -> {
            poll();
            timerId = vertx.setPeriodic(intervalMillis, id -> poll());
        });
    }

    /** Stops polling and returns the timeline: time_s, running, waiting, kv_cache_usage_perc, plus failure counts. */
    public Timeline stop() {
        java.util.concurrent.CompletableFuture<Timeline> result = new java.util.concurrent.CompletableFuture<>();
        context.runOnContext(v -> {
            vertx.cancelTimer(timerId);
            result.complete(timeline());
        });
        Timeline out = result.join();
        web.close();
        return out;
    }

    private void poll() {
        long sentNanos = System.nanoTime();
        web.getAbs(url).send().onComplete(ar -> {
            if (ar.succeeded() && ar.result().statusCode() == 200) {
                record(sentNanos, ar.result().body());
            } else {
                failures++;
                if (firstFailure == null) {
                    firstFailure = ar.succeeded() ? "HTTP " + ar.result().statusCode() : String.valueOf(ar.cause());
                }
            }
        });
    }

    private void record(long sentNanos, Buffer body) {
        if (points.size() >= MAX_POINTS || body == null) {
            return;
        }
        Map<String, Double> values = parse(body.toString());
        points.add(new double[] {(sentNanos - originNanos) / 1e9, values.getOrDefault(RUNNING, Double.NaN),
                values.getOrDefault(WAITING, Double.NaN), values.getOrDefault(KV_USAGE, Double.NaN)});
    }

    /** Sums of the three gauges over their label sets; gauges absent from the page are absent from the map. */
    public static Map<String, Double> parse(String page) {
        Map<String, Double> sums = new LinkedHashMap<>();
        for (String line : page.split("\n")) {
            if (line.isEmpty() || line.charAt(0) == '#') {
                continue;
            }
            String name = metricName(line);
            if (name.equals(RUNNING) || name.equals(WAITING) || name.equals(KV_USAGE)) {
                int end = line.lastIndexOf('}');
                String[] rest = line.substring(end >= 0 ? end + 1 : name.length()).trim().split("\\s+");
                try {
                    sums.merge(name, Double.parseDouble(rest[0]), Double::sum);
                } catch (NumberFormatException ignored) {
                    // a sample we cannot read is skipped like an absent one
                }
            }
        }
        return sums;
    }

    private static String metricName(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        return line.substring(0, i);
    }

    private Timeline timeline() {
        int n = points.size();
        List<List<Double>> columns = new ArrayList<>(4);
        for (int c = 0; c < 4; c++) {
            List<Double> column = new ArrayList<>(n);
            for (double[] point : points) {
                column.add(Double.isNaN(point[c]) ? null : point[c]);
            }
            columns.add(java.util.Collections.unmodifiableList(column));
        }
        return new Timeline(url, intervalMillis, columns.get(0), columns.get(1), columns.get(2), columns.get(3),
                failures, firstFailure);
    }

    /**
     * What a scrape got: the URL and interval, each poll's time (s from the run's start) and the three gauges' sums
     * (null where the page lacked one), the failed polls and the first failure.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Timeline(String url, long intervalMs, List<Double> timeS, List<Double> numRequestsRunning,
                           List<Double> numRequestsWaiting, List<Double> kvCacheUsagePerc, long failedPolls,
                           String firstFailure) {
    }
}
