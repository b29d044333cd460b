package dev.infersim.bench.report;

import dev.infersim.result.ResultJson;
import dev.infersim.result.ServingReport;
import dev.infersim.result.ServingResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static dev.infersim.bench.report.BenchResultRoundTripTest.resource;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code infersim merge}'s result is written and read by its types ({@link MergeKeys} in a {@link ServingResult}): the
 * two shards of one run written by infersim at f8ad962, with their latency logs, merge now into the very result
 * f8ad962 merged from them (merged.json, run from a directory where they were out/shard0.json and out/shard1.json),
 * and that result is read and written again byte for byte.
 */
class MergeRoundTripTest {
    @TempDir
    Path dir;

    @Test
    void theShardsOfARunMergeIntoTheResultTheUntypedMergeWrote() throws Exception {
        Path first = resource("bench-shard-0-of-2.json");
        Path second = resource("bench-shard-1-of-2.json");
        ServingReport<MergeKeys> merged = ShardMerge.merge(List.of(second, first));
        String expected = Files.readString(resource("merged.json"))
                .replace("\"out/shard0.json\"", "\"" + first + "\"").replace("\"out/shard1.json\"", "\"" + second + "\"");
        assertEquals(expected, ResultJson.text(merged.result()));
    }

    @Test
    void aMergedResultIsReadAndWrittenAgainByteForByte() throws Exception {
        Path file = resource("merged.json");
        ServingResult<MergeKeys> read = ServingResult.read(file, MergeKeys.class);
        Path again = dir.resolve("merged.json");
        ResultJson.write(again, read);
        assertEquals(Files.readString(file), Files.readString(again));
        assertEquals(read, ServingResult.read(again, MergeKeys.class));
    }
}
