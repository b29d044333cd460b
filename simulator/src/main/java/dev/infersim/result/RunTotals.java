package dev.infersim.result;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * vLLM's run totals, after its run keys: duration (s), completed, failed, total_input_tokens, total_output_tokens,
 * request_throughput, request_goodput (null without goodput objectives), output_throughput, total_token_throughput,
 * max_output_tokens_per_s and max_concurrent_requests (null where unknown, as for merged shards). Each is null when
 * read from a file that lacks it (a prediction has throughputs only).
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record RunTotals(Double duration, Long completed, Long failed, Long totalInputTokens, Long totalOutputTokens,
                        Double requestThroughput, Double requestGoodput, Double outputThroughput,
                        Double totalTokenThroughput, Double maxOutputTokensPerS, Integer maxConcurrentRequests) {

    /** The totals of a measured window of {@code durationS} seconds. */
    public static RunTotals of(ServingSummary stats, double durationS) {
        return new RunTotals(durationS, stats.completed(), stats.failed(), stats.inputTokens(), stats.outputTokens(),
                perSecond(stats.completed(), durationS),
                stats.measuresGoodput() ? perSecond(stats.goodRequests(), durationS) : null,
                perSecond(stats.outputTokens(), durationS),
                perSecond(stats.inputTokens() + stats.outputTokens(), durationS),
                stats.maxOutputTokensPerS() < 0 ? null : (double) stats.maxOutputTokensPerS(),
                stats.maxConcurrentRequests() < 0 ? null : stats.maxConcurrentRequests());
    }

    private static double perSecond(long count, double seconds) {
        return seconds > 0 ? count / seconds : 0;
    }
}
