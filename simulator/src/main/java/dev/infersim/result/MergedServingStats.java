package dev.infersim.result;

import java.util.Map;

/**
 * The measured window of several shards of one run, added together: counts and tokens summed, each latency metric's
 * histograms added and its moments pooled ({@link LatencyStats#add}). The per-second peaks cannot be added (each shard
 * bins its own window), so they are unknown.
 *
 * @param measuresGoodput whether the shards measured goodput (their good requests are then summed)
 * @param latencies by name ({@link ServingSummary#LATENCIES}); a missing one has no samples
 */
public record MergedServingStats(boolean measuresGoodput, long completed, long failed, long inputTokens, long outputTokens,
                                 long cachedPromptTokens, long preemptions, long goodRequests,
                                 Map<String, LatencyStats> latencies) implements ServingSummary {

    public MergedServingStats {
        latencies = Map.copyOf(latencies);
    }

    @Override
    public LatencyStats metric(String name) {
        return named(name);
    }

    @Override
    public LatencyStats icl() {
        return named("icl");
    }

    @Override
    public LatencyStats queueTime() {
        return named("queue_time");
    }

    @Override
    public LatencyStats prefillTime() {
        return named("prefill_time");
    }

    @Override
    public LatencyStats clientQueueTime() {
        return named("client_queue_time");
    }

    private LatencyStats named(String name) {
        LatencyStats s = latencies.get(name);
        return s != null ? s : new LatencyStats();
    }

    @Override
    public long maxOutputTokensPerS() {
        return -1;
    }

    @Override
    public int maxConcurrentRequests() {
        return -1;
    }
}
