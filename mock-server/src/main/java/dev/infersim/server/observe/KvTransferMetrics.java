package dev.infersim.server.observe;

import dev.infersim.engine.EngineRequest;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One engine's KV-connector metrics under vLLM's names (NixlConnector's, vllm/distributed/kv_transfer/kv_connector/v1/nixl/stats.py,
 * https://github.com/vllm-project/vllm/tree/9aaf83ef502fc37bc647f6e474314d48ba36cd1c), with vLLM's buckets and labels:
 * on a decode side {@code vllm:nixl_xfer_time_seconds} (each pull, from allocating its blocks to its KV's arrival, model
 * seconds), {@code vllm:nixl_bytes_transferred} and {@code vllm:nixl_num_failed_notifications_total}; on a prefill side
 * {@code vllm:nixl_num_kv_expired_reqs_total} (prometheus_client adds {@code _total} to a counter), plus infersim's {@code infersim:kv_held_requests} (prefills holding blocks now)
 * and {@code infersim:kv_unknown_notices_total} (reads of holds already expired or never made, which vLLM logs).
 */
public final class KvTransferMetrics {
    private static final double[] XFER_BUCKETS = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0};
    private static final double[] BYTES_BUCKETS = bytesBuckets();

    private final String labels;
    private final BucketHistogram xferTime = new BucketHistogram(XFER_BUCKETS);
    private final BucketHistogram bytes = new BucketHistogram(BYTES_BUCKETS);
    private final AtomicLong failedNotifications = new AtomicLong();
    private final AtomicLong expired = new AtomicLong();
    private final AtomicLong unknownNotices = new AtomicLong();
    private volatile int heldRequests;

    public KvTransferMetrics(String servedModelName, int engineIndex) {
        this.labels = "engine=\"" + engineIndex + "\",model_name=\"" + ServerMetrics.escapeLabel(servedModelName) + "\"";
    }

    /** vLLM's {@code [2 ** (10 + i) for i in range(1, 25, 2)]}. */
    private static double[] bytesBuckets() {
        double[] b = new double[12];
        for (int i = 1, n = 0; i < 25; i += 2) {
            b[n++] = Math.pow(2, 10 + i);
        }
        return b;
    }

    /** Engine thread: a pull ended (its KV arrived), {@code bytes} moved. */
    public void pulled(EngineRequest r, double bytesMoved) {
        xferTime.record((r.kvTransferEndNanos() - r.kvTransferStartNanos()) / 1e9);
        bytes.record(bytesMoved);
    }

    public void failedNotification() {
        failedNotifications.incrementAndGet();
    }

    /** Engine thread: a hold's lease ran out before the decode side read it. */
    public void expired() {
        expired.incrementAndGet();
    }

    /** Engine thread: a read named a hold this engine does not have. */
    public void unknownNotice() {
        unknownNotices.incrementAndGet();
    }

    /** Engine thread: prefills holding blocks now. */
    public void held(int n) {
        heldRequests = n;
    }

    public static String render(List<KvTransferMetrics> engines) {
        StringBuilder b = new StringBuilder(4096);
        histogram(b, engines, "vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.", true);
        histogram(b, engines, "vllm:nixl_bytes_transferred", "Histogram of bytes transferred per NIXL KV Cache transfers.", false);
        counter(b, engines, "vllm:nixl_num_failed_notifications_total", "Number of failed NIXL KV Cache notifications.", 0);
        counter(b, engines, "vllm:nixl_num_kv_expired_reqs_total", "Number of requests that had their KV expire. NOTE: This metric "
                + "is tracked on the P instance.", 1);
        counter(b, engines, "infersim:kv_unknown_notices_total", "Reads of prefill KV holds that had expired or were never made.", 2);
        header(b, "infersim:kv_held_requests", "Finished prefills holding their KV blocks for a decode side.", "gauge");
        for (KvTransferMetrics m : engines) {
            b.append("infersim:kv_held_requests{").append(m.labels).append("} ").append((double) m.heldRequests).append('\n');
        }
        return b.toString();
    }

    private long counterValue(int which) {
        return switch (which) {
            case 0 -> failedNotifications.get();
            case 1 -> expired.get();
            default -> unknownNotices.get();
        };
    }

    private static void counter(StringBuilder b, List<KvTransferMetrics> engines, String name, String help, int which) {
        header(b, name, help, "counter");
        for (KvTransferMetrics m : engines) {
            b.append(name).append('{').append(m.labels).append("} ").append((double) m.counterValue(which)).append('\n');
        }
    }

    private static void histogram(StringBuilder b, List<KvTransferMetrics> engines, String name, String help, boolean time) {
        header(b, name, help, "histogram");
        for (KvTransferMetrics m : engines) {
            BucketHistogram h = time ? m.xferTime : m.bytes;
            double[] bounds = h.bounds();
            for (int i = 0; i < bounds.length; i++) {
                b.append(name).append("_bucket{").append(m.labels).append(",le=\"").append(bounds[i]).append("\"} ")
                        .append((double) h.cumulative(i)).append('\n');
            }
            b.append(name).append("_bucket{").append(m.labels).append(",le=\"+Inf\"} ").append((double) h.count()).append('\n');
            b.append(name).append("_count{").append(m.labels).append("} ").append((double) h.count()).append('\n');
            b.append(name).append("_sum{").append(m.labels).append("} ").append(h.sum()).append('\n');
        }
    }

    private static void header(StringBuilder b, String name, String help, String type) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }
}
