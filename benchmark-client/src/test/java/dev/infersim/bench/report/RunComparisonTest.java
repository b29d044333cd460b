package dev.infersim.bench.report;

import dev.infersim.result.ResultJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RunComparisonTest {

    @TempDir
    Path dir;

    private Path detailed(String name, double ttftShiftMs, long seed) throws IOException {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 400; i++) {
            double ttft = 100 + ttftShiftMs + 20 * -Math.log(1 - r.nextDouble());
            s.append(String.format(Locale.ROOT, "{\"index\":%d,\"output_len\":10,\"ttft_ms\":%.4f,\"tpot_ms\":%.4f,"
                    + "\"e2el_ms\":%.4f}%n", i, ttft, 10 + r.nextDouble(), ttft + 100));
        }
        s.append("{\"index\":400,\"output_len\":0,\"error\":\"timeout\"}\n");
        Path p = dir.resolve(name);
        Files.writeString(p, s);
        return p;
    }

    @Test
    void shiftedTtftIsSignificantWhileTpotFromTheSameDistributionIsNot() throws IOException {
        List<RunComparison.Test> tests = RunComparison.tests(detailed("a.jsonl", 0, 1), detailed("b.jsonl", 15, 2), 0.05);
        assertEquals(3, tests.size());
        RunComparison.Test ttft = tests.get(0);
        assertEquals("ttft_ms", ttft.metric());
        assertEquals(400, ttft.samplesA(), "the failed request is left out");
        assertTrue(ttft.significant(), "p = " + ttft.pValue());
        assertFalse(tests.get(1).significant(), "tpot p = " + tests.get(1).pValue());
    }

    @Test
    void everyPercentileEitherResultReportsIsCompared() throws IOException {
        Path a = Files.writeString(dir.resolve("a.json"),
                "{\"completed\": 5, \"mean_ttft_ms\": 10, \"p90_ttft_ms\": 20, \"p99.9_ttft_ms\": 30}");
        Path b = Files.writeString(dir.resolve("b.json"), "{\"completed\": 5, \"mean_ttft_ms\": 11, \"p90_ttft_ms\": 25}");

        List<String> metrics = RunComparison.rows(RunComparison.Compared.read(a), RunComparison.Compared.read(b)).stream()
                .map(RunComparison.Row::metric).toList();

        assertEquals(List.of("completed", "mean_ttft_ms", "p90_ttft_ms", "p99.9_ttft_ms"), metrics);
    }

    @Test
    void resultIsReadWithoutVllmsPerRequestArrays() throws IOException {
        Path result = dir.resolve("r.json");
        Files.writeString(result, "{\"completed\": 2, \"ttfts\": [0.1, 0.2], \"itls\": [[0.01], []],"
                + " \"request_throughput\": 1.5, \"generated_texts\": [\"a\", \"b\"]}");
        List<String> keys = new ArrayList<>();
        ResultJson.readObject(result).fieldNames().forEachRemaining(keys::add);
        assertEquals(List.of("completed", "request_throughput"), keys);
    }
}
