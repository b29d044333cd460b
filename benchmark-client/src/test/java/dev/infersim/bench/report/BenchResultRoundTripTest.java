package dev.infersim.bench.report;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.bench.FakeStreamingServer;
import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.ResultJson;
import dev.infersim.result.ServingResult;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A bench result is read back by the types that wrote it ({@link ClientKeys} in a {@link ServingResult}): results
 * written by infersim at f8ad962, before the client's keys were typed (a validated open-loop run with --metadata,
 * --goodput and --scrape-metrics; a closed loop with --strict-timing and a --baseline-url run; a shard), and a result
 * written now, are read and written again byte for byte.
 */
class BenchResultRoundTripTest {
    @TempDir
    Path dir;

    static Path resource(String name) throws URISyntaxException {
        return Path.of(BenchResultRoundTripTest.class.getResource("/results/" + name).toURI());
    }

    @ParameterizedTest
    @ValueSource(strings = {"bench-validated.json", "bench-closed-loop-baseline.json", "bench-shard-0-of-2.json"})
    void aResultWrittenBeforeTheKeysWereTypedIsReadAndWrittenAgainByteForByte(String name) throws Exception {
        Path file = resource(name);
        Path again = dir.resolve(name);
        ResultJson.write(again, ClientKeys.read(file));
        assertEquals(Files.readString(file), Files.readString(again));
    }

    @Test
    void aResultWrittenNowIsReadBackAsTheSameRecordsAndTheSameBytes() throws Exception {
        BenchConfig config;
        BenchResult measured;
        ObjectNode metadata = ResultJson.mapper().createObjectNode().put("k", "v").put("infersim_workload_seed", 7L);
        try (FakeStreamingServer server = new FakeStreamingServer(5, 5, 2, 5, 0, 0)) {
            config = new BenchConfig(server.baseUrl(), "/v1/completions", "m", null, true, 10_000, 1_000_000_000L, 0,
                    new GoodputSlo(Double.NaN, 50, Double.NaN), List.of("ttft", "tpot", "itl", "e2el"),
                    List.of(50.0, 99.0), 100, server.baseUrl() + "/metrics", 100);
            try (BenchmarkClient client = new BenchmarkClient(config)) {
                measured = client.run(Workload.open(WorkloadSpec.builder().numPrompts(12).randomInputLen(16)
                        .randomOutputLen(8).requestRate(40).ignoreEos(true).seed(5).build()), 2, 0, 0, metadata);
            }
        }
        BenchResult result = measured.invalidatedBy("a reason of the test's").withOutputError(null);
        Path file = dir.resolve("result.json");
        result.write(file);

        ServingResult<ClientKeys> read = ClientKeys.read(file);
        assertEquals(result.result(), read);
        assertEquals(Files.readString(file), ResultJson.text(read));
        assertEquals(List.of("k", "infersim_workload_seed"), List.copyOf(read.producer().metadata().keys().keySet()));
        // read as the other results are, the typed keys are the same; the run's metadata is the user's, untyped
        assertEquals(result.keys().withMetadata(ClientKeys.RunMetadata.NONE),
                ServingResult.read(file, ClientKeys.class).producer());
    }
}
