package dev.infersim.server.observe;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.json.Json;

import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The live dashboard's data: a snapshot of every replica's engine, read from the same counters and gauges that /metrics
 * renders, with rates over the samples of the last {@value #WINDOW_SECONDS} seconds (wall time). Little's law is checked
 * on that window: L, the mean requests in the engine (running + waiting) over its samples, against lambda W, the arrival
 * rate (finished plus the change in requests present, per model second) times the mean end-to-end latency of the
 * requests that finished in it. All times are model time, as in /metrics. The server samples every
 * {@value #SAMPLE_INTERVAL_MS} ms whether or not a page is open ({@link Dashboard#mountLive}), so a page opened at any
 * moment sees a full window at once, and first receives the last {@value #HISTORY} snapshots for its charts; snapshots
 * are taken at most every {@value #MIN_INTERVAL_MS} ms, whoever asks, so any number of viewers cost one sample.
 *
 * <p>The snapshot's JSON, one object per replica under {@code replicas}: {@code running}, {@code waiting},
 * {@code kv_cache_usage}, {@code finished}, {@code arrival_rate}, {@code completion_rate} (per model second),
 * {@code tokens_per_step}, {@code step_ms}, {@code little} ({@code L}, {@code lambda}, {@code W_s}, {@code lambda_W},
 * {@code window_s}: the wall seconds the window spans), and {@code ttft}/{@code itl} histograms ({@code le} upper bounds
 * in seconds, {@code count} per bucket, last = +Inf).
 */
public final class DashboardFeed {
    static final long WINDOW_SECONDS = 10;
    static final long SAMPLE_INTERVAL_MS = 500;
    static final long MIN_INTERVAL_MS = 450;
    /** Snapshots a newly opened page receives first: two minutes of history at one per half second. */
    static final int HISTORY = 240;

    private final Supplier<List<ServerMetrics>> replicas;
    private final long startNanos;
    private final Map<ServerMetrics, ArrayDeque<Sample>> history = new IdentityHashMap<>();
    private final ArrayDeque<String> recent = new ArrayDeque<>();
    private String latest;
    private long latestNanos = Long.MIN_VALUE;

    /** The cumulative figures one sample reads from a replica's metrics. */
    private record Sample(long wallNanos, int running, int waiting, double kvUsage, long finished, double e2eSum,
                          long e2eCount, double stepSum, long stepCount, double tokenSum, long tokenCount) {

        static Sample of(ServerMetrics m, long wallNanos) {
            return new Sample(wallNanos, m.running(), m.waiting(), m.kvUsage(), m.finished(), m.e2e.sum(), m.e2e.count(),
                    m.stepDuration.sum(), m.stepDuration.count(), m.iterationTokens.sum(), m.iterationTokens.count());
        }

        int present() {
            return running + waiting;
        }
    }

    public DashboardFeed(Supplier<List<ServerMetrics>> replicas, long startNanos) {
        this.replicas = replicas;
        this.startNanos = startNanos;
    }

    /** The latest snapshot as JSON, sampling anew when the last one is older than {@value #MIN_INTERVAL_MS} ms. */
    synchronized String snapshot(long nowNanos) {
        if (latest == null || nowNanos - latestNanos >= MIN_INTERVAL_MS * 1_000_000) {
            latest = sample(nowNanos);
            latestNanos = nowNanos;
            recent.addLast(latest);
            if (recent.size() > HISTORY) {
                recent.removeFirst();
            }
        }
        return latest;
    }

    /**
     * A new viewer's feed: first the recent snapshots as one JSON array (the page's charts start with history), then
     * the latest snapshot at each push.
     */
    LongFunction<String> viewer() {
        boolean[] started = {false};
        return nowNanos -> {
            if (started[0]) {
                return snapshot(nowNanos);
            }
            started[0] = true;
            snapshot(nowNanos);
            synchronized (this) {
                return "[" + String.join(",", recent) + "]";
            }
        };
    }

    private String sample(long nowNanos) {
        List<ServerMetrics> all = replicas.get();
        ObjectNode root = Json.MAPPER.createObjectNode();
        double timeScale = all.isEmpty() ? 1 : all.get(0).timeScale();
        root.put("time_scale", timeScale);
        root.put("model_time_s", (nowNanos - startNanos) / 1e9 * timeScale);
        ArrayNode list = root.putArray("replicas");
        history.keySet().retainAll(all);
        for (int i = 0; i < all.size(); i++) {
            ServerMetrics m = all.get(i);
            ArrayDeque<Sample> window = history.computeIfAbsent(m, k -> new ArrayDeque<>());
            window.addLast(Sample.of(m, nowNanos));
            // the window is what was observed over the last seconds, however long ago anyone last looked
            while (window.size() > 1 && nowNanos - window.getFirst().wallNanos() > WINDOW_SECONDS * 1_000_000_000L) {
                window.removeFirst();
            }
            ObjectNode r = list.addObject();
            r.put("replica", i);
            describe(r, window, timeScale);
            histogram(r.putObject("ttft"), m.ttft);
            histogram(r.putObject("itl"), m.itl);
        }
        return root.toString();
    }

    private static void describe(ObjectNode r, ArrayDeque<Sample> window, double timeScale) {
        Sample first = window.getFirst();
        Sample last = window.getLast();
        r.put("running", last.running());
        r.put("waiting", last.waiting());
        r.put("kv_cache_usage", last.kvUsage());
        r.put("finished", last.finished());
        double modelSeconds = (last.wallNanos() - first.wallNanos()) / 1e9 * timeScale;
        double finishedRate = modelSeconds > 0 ? (last.finished() - first.finished()) / modelSeconds : 0;
        double arrivalRate = modelSeconds > 0
                ? (last.finished() - first.finished() + last.present() - first.present()) / modelSeconds : 0;
        r.put("arrival_rate", arrivalRate);
        r.put("completion_rate", finishedRate);
        long steps = last.stepCount() - first.stepCount();
        r.put("tokens_per_step", steps > 0 ? (last.tokenSum() - first.tokenSum()) / steps : 0);
        r.put("step_ms", steps > 0 ? 1e3 * (last.stepSum() - first.stepSum()) / steps : 0);
        double meanPresent = window.stream().mapToInt(Sample::present).average().orElse(0);
        long ended = last.e2eCount() - first.e2eCount();
        double w = ended > 0 ? (last.e2eSum() - first.e2eSum()) / ended : 0;
        ObjectNode little = r.putObject("little");
        little.put("L", meanPresent);
        little.put("lambda", arrivalRate);
        little.put("W_s", w);
        little.put("lambda_W", arrivalRate * w);
        little.put("window_s", (last.wallNanos() - first.wallNanos()) / 1e9);
    }

    private static void histogram(ObjectNode out, BucketHistogram h) {
        ArrayNode le = out.putArray("le");
        ArrayNode count = out.putArray("count");
        double[] bounds = h.bounds();
        long below = 0;
        for (int i = 0; i <= bounds.length; i++) {
            long cumulative = h.cumulative(i);
            if (i < bounds.length) {
                le.add(bounds[i]);
            }
            count.add(cumulative - below);
            below = cumulative;
        }
    }
}
