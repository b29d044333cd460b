package dev.infersim.bench.config;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.workload.Shard;

import java.nio.file.Path;

/**
 * How one run of a workload goes: which of its requests are warmup, how long it may last, where its per-request
 * detail goes, and, for a distributed run, which shard this client sends and when the shared schedule starts.
 *
 * @param numWarmups          leading requests excluded from the measured window ({@code --num-warmups})
 * @param warmupDurationNanos requests scheduled before this are excluded ({@code --warmup-duration})
 * @param durationNanos       stop issuing measured requests after this long ({@code --duration}); 0 for no limit
 * @param metadata            extra top-level keys ({@code --metadata k=v}, the infersim version, workload
 *                            description), written into the result unless a measured key has the name
 * @param detailFile          per-request JSONL of the measured requests ({@code --save-detailed}), or null
 * @param shard               the requests this client sends ({@code --shard I/N}); null for an unsharded run
 * @param startAtEpochMillis  wall-clock instant the schedule starts ({@code --start-at}); 0 for right away
 * @param latencyLog          HdrHistogram log of the measured latencies, for {@code infersim merge}; or null
 */
public record RunPlan(long numWarmups, long warmupDurationNanos, long durationNanos, ObjectNode metadata,
                      Path detailFile, Shard shard, long startAtEpochMillis, Path latencyLog) {

    public RunPlan {
        metadata = metadata.deepCopy(); // in order, as written
    }

    /** An unsharded run starting right away. */
    public static RunPlan of(long numWarmups, long warmupDurationNanos, long durationNanos, ObjectNode metadata,
                             Path detailFile) {
        return new RunPlan(numWarmups, warmupDurationNanos, durationNanos, metadata, detailFile, null, 0, null);
    }

    /** The requests this run sends. */
    public Shard sent() {
        return shard == null ? Shard.WHOLE : shard;
    }
}
