package dev.infersim.bench.report;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.bench.measure.ErrorTally;

import java.util.List;
import java.util.Map;

/**
 * The keys {@code infersim merge} writes into the merged result of a sharded run ({@link ShardMerge}), each prefixed
 * {@code infersim_} there: the first shard's backend, endpoint, load mode, workload and version, the run's validity
 * (every shard's reasons, each naming its shard), the pooled send lag, requests sent and cancelled, errors by type, the
 * interrupt, the percentile curves, and each shard's own figures. The client's nested blocks are its
 * ({@link ClientKeys}).
 *
 * @param workload the bench's {@code infersim_workload} metadata as the first shard has it (JSON: the user's workload
 *                 flags); not written where it has none
 * @param version  the infersim version that measured the first shard; not written where it has none
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record MergeKeys(@JsonInclude(JsonInclude.Include.NON_NULL) String backend,
                        @JsonInclude(JsonInclude.Include.NON_NULL) String baseUrl,
                        @JsonInclude(JsonInclude.Include.NON_NULL) String endpoint,
                        @JsonInclude(JsonInclude.Include.NON_NULL) String loadMode,
                        @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode workload,
                        @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode version, boolean valid,
                        List<String> invalidReasons, ClientKeys.LagSummary sendLagMs, long sent, long cancelled,
                        Map<String, ErrorTally.Quoted> errors, boolean interrupted,
                        ClientKeys.PercentileCurves percentileCurves, List<ShardSummary> shards) {

    /** One shard's own figures: its file, which shard, its vLLM counts and throughput, validity, send lag and window. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record ShardSummary(String file, String shard, long numPrompts, Long completed, Long failed,
                               Double duration, Double requestThroughput,
                               @JsonProperty("infersim_valid") boolean valid,
                               @JsonProperty("infersim_send_lag_ms") ClientKeys.LagSummary sendLagMs,
                               long scheduleStartEpochMs, double windowStartS, double windowEndS) {
    }
}
