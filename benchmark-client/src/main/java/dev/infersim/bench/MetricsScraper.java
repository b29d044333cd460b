package dev.infersim.bench;

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

    MetricsScraper(Vertx vertx, String url, long intervalMillis, long originNanos) {
        this.vertx = vertx;
        this.context = vertx.getOrCreateContext();
        this.web = WebClient.create(vertx);
        this.url = url;
        this.intervalMillis = intervalMillis;
        this.originNanos = originNanos;
    }

    void start() {
        context.runOnContext(v -> {
            poll();
            timerId = vertx.setPeriodic(intervalMillis, id -> poll());
        });
    }

    /** Stops polling and returns the timeline: time_s, running, waiting, kv_cache_usage_perc, plus failure counts. */
    Map<String, Object> stop() {
        java.util.concurrent.CompletableFuture<Map<String, Object>> result = new java.util.concurrent.CompletableFuture<>();
        context.runOnContext(v -> {
            vertx.cancelTimer(timerId);
            result.complete(timeline());
        });
        Map<String, Object> out = result.join();
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

    private Map<String, Object> timeline() {
        int n = points.size();
        Double[][] columns = new Double[4][n];
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < 4; c++) {
                double v = points.get(i)[c];
                columns[c][i] = Double.isNaN(v) ? null : v;
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("url", url);
        out.put("interval_ms", intervalMillis);
        out.put("time_s", columns[0]);
        out.put("num_requests_running", columns[1]);
        out.put("num_requests_waiting", columns[2]);
        out.put("kv_cache_usage_perc", columns[3]);
        out.put("failed_polls", failures);
        out.put("first_failure", firstFailure);
        return out;
    }
}
