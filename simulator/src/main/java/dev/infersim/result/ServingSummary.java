package dev.infersim.result;

import java.util.List;

/**
 * What a {@link ServingResult} reports of a run's measured window: counts, tokens and latency statistics. Kept by
 * {@link ServingStats} as a run goes, or put together from the shards of a distributed run
 * ({@link MergedServingStats}).
 */
public interface ServingSummary {
    /** Names of every latency statistic a summary holds, as {@link #latency} and a shard's histogram log tag them. */
    List<String> LATENCIES = List.of("ttft", "tpot", "itl", "e2el", "icl", "queue_time", "prefill_time",
            "client_queue_time");

    /** Whether goodput objectives were set, so that {@link #goodRequests} means something. */
    boolean measuresGoodput();

    long completed();

    long failed();

    long inputTokens();

    long outputTokens();

    /** Prompt tokens served from the server's prefix cache, over measured requests. */
    long cachedPromptTokens();

    long preemptions();

    /** Requests that met every goodput objective. */
    long goodRequests();

    /** The named latency metric as vLLM's {@code --percentile-metrics} spells it: ttft, tpot, itl or e2el. */
    LatencyStats metric(String name);

    /** Gaps between response chunks (only clients that see chunks record them). */
    LatencyStats icl();

    LatencyStats queueTime();

    LatencyStats prefillTime();

    LatencyStats clientQueueTime();

    /** The latency statistic named as in {@link #LATENCIES}. */
    default LatencyStats latency(String name) {
        return switch (name) {
            case "ttft", "tpot", "itl", "e2el" -> metric(name);
            case "icl" -> icl();
            case "queue_time" -> queueTime();
            case "prefill_time" -> prefillTime();
            case "client_queue_time" -> clientQueueTime();
            default -> throw new IllegalArgumentException("unknown latency '" + name + "'; use one of " + LATENCIES);
        };
    }

    /** vLLM's max_output_tokens_per_s; -1 when unknown. */
    long maxOutputTokensPerS();

    /** vLLM's max_concurrent_requests; -1 when unknown. */
    int maxConcurrentRequests();
}
