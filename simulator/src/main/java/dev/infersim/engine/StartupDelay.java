package dev.infersim.engine;

import dev.infersim.engine.profile.ModelProfile;
import dev.infersim.common.ConfigException;

import java.util.Locale;

/**
 * How long a replica takes from start until it serves (a cold start), in model time: reading the weights into GPU
 * memory plus capturing CUDA graphs, the two phases a vLLM server logs before its API answers. The simulator's
 * autoscaled replicas and the mock's {@code --startup-delay} both pay it.
 *
 * <p>{@code auto} models each phase:
 * <ul>
 *   <li><b>Weight load</b> = all weight bytes ({@link ModelProfile#totalParams()} x dtype bytes) / the load bandwidth.
 *   The tensor-parallel ranks read their shards from the same storage at once, so their shares add up to the whole
 *   model over one bandwidth. The default {@value #DEFAULT_LOAD_BANDWIDTH_GBPS} GB/s is what a published vLLM startup
 *   log shows for Llama-3.1-8B-Instruct read from a VM's local disk: "Loading weights took 4.75 seconds" for
 *   "14.99 GiB" (16.1 GB). Network volumes are slower (the same log format shows 14.99 GiB in 24.45 s, 0.66 GB/s,
 *   elsewhere), so set {@code --load-bandwidth-gbps} to the storage a deployment really reads from.</li>
 *   <li><b>Graph capture</b> = capture sizes x layers x {@value #CAPTURE_NANOS_PER_SIZE_PER_LAYER} ns. vLLM captures
 *   one graph per batch size in {@code [1, 2, 4] + range(8, 256, 8) + range(256, min(2 x max_num_seqs, 512) + 1, 16)}
 *   (its default {@code cudagraph_capture_sizes}), and its model runner notes that capturing "usually takes 5~20
 *   seconds"; the per-layer constant puts Llama-3.1-8B (32 layers, 51 sizes at max_num_seqs 256) at 8.2 s and
 *   Llama-3.1-70B (80 layers) at 20 s, the two ends of that range.</li>
 * </ul>
 *
 * @param weightLoadNanos   model nanoseconds to read the weights
 * @param graphCaptureNanos model nanoseconds to capture CUDA graphs
 */
public record StartupDelay(long weightLoadNanos, long graphCaptureNanos) {
    /** Gigabytes (10^9 bytes) per second read while loading weights, unless {@code --load-bandwidth-gbps} says otherwise. */
    public static final double DEFAULT_LOAD_BANDWIDTH_GBPS = 3.4;
    /** Capture time per captured batch size per decoder layer. */
    public static final long CAPTURE_NANOS_PER_SIZE_PER_LAYER = 5_000_000;
    /** No delay: the replica serves at once. */
    public static final StartupDelay NONE = new StartupDelay(0, 0);

    public StartupDelay {
        ConfigException.check(weightLoadNanos >= 0 && graphCaptureNanos >= 0, "startup delay must be >= 0");
    }

    /** The modelled cold start of a deployment reading its weights at {@code loadBandwidthGbps} GB/s. */
    public static StartupDelay auto(Deployment d, double loadBandwidthGbps) {
        ConfigException.check(loadBandwidthGbps > 0 && Double.isFinite(loadBandwidthGbps),
                "--load-bandwidth-gbps must be a positive number, got %s", loadBandwidthGbps);
        double weightBytes = (double) d.model().totalParams() * d.dtype().bytes();
        long load = Math.round(weightBytes / (loadBandwidthGbps * 1e9) * 1e9);
        long capture = (long) captureSizes(d.maxNumSeqs()) * d.model().layers() * CAPTURE_NANOS_PER_SIZE_PER_LAYER;
        return new StartupDelay(load, capture);
    }

    /** A fixed delay, all of it counted as weight load. */
    public static StartupDelay ofSeconds(double seconds) {
        ConfigException.check(seconds >= 0 && Double.isFinite(seconds), "--startup-delay must be auto or seconds >= 0, got %s", seconds);
        return new StartupDelay(Math.round(seconds * 1e9), 0);
    }

    /** Parses {@code --startup-delay}: {@code auto} or a number of seconds. */
    public static StartupDelay parse(String spec, Deployment d, double loadBandwidthGbps) {
        String s = spec.trim();
        if (s.equalsIgnoreCase("auto")) {
            return auto(d, loadBandwidthGbps);
        }
        try {
            return ofSeconds(Double.parseDouble(s));
        } catch (NumberFormatException e) {
            throw new ConfigException("--startup-delay must be auto or a number of seconds, got '" + spec + "'");
        }
    }

    /** The number of batch sizes vLLM captures a CUDA graph for by default at this {@code --max-num-seqs}. */
    public static int captureSizes(int maxNumSeqs) {
        int maxSize = Math.min(2 * maxNumSeqs, 512);
        int n = 0;
        for (int size : new int[] {1, 2, 4}) {
            n += size <= maxSize ? 1 : 0;
        }
        for (int size = 8; size < 256 && size <= maxSize; size += 8) {
            n++;
        }
        for (int size = 256; size <= maxSize; size += 16) {
            n++;
        }
        return n;
    }

    public long totalNanos() {
        return weightLoadNanos + graphCaptureNanos;
    }

    public boolean isNone() {
        return totalNanos() == 0;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%.1f s (weights %.1f s + graph capture %.1f s)", totalNanos() / 1e9,
                weightLoadNanos / 1e9, graphCaptureNanos / 1e9);
    }
}
