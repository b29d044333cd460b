package dev.infersim.sim;

import dev.infersim.result.RequestLogWriter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.PrefixRepetitionDataset;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * vLLM's prefix_repetition workload: G prefixes of P tokens, each prompt a prefix plus S random tokens. The first
 * request of each prefix computes it (cold); later ones find its blocks in the prefix cache (warm) and compute only the
 * suffix, so their TTFT is lower, and the prompt-token hit rate is warm share x P / (P + S) when P is a whole number of
 * blocks and the cache never evicts (here it holds every prefix many times over).
 */
class PrefixCachingTest {
    private static final int PREFIX = 1024;
    private static final int SUFFIX = 256;
    private static final int PREFIXES = 8;
    private static final int REQUESTS = 800;

    @TempDir
    Path dir;

    @Test
    void warmPrefixesCutTtftAndHitRateMatchesTheWorkload() throws IOException {
        WorkloadSpec spec = WorkloadSpec.builder().datasetName("prefix_repetition").prefixRepetitionPrefixLen(PREFIX)
                .prefixRepetitionSuffixLen(SUFFIX).prefixRepetitionNumPrefixes(PREFIXES).prefixRepetitionOutputLen(32)
                .requestRate(4).numPrompts(REQUESTS).seed(9).build();
        Workload workload = Workload.open(spec);
        EngineCore engine = EngineCore.create(Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build());
        Path detail = dir.resolve("detail.jsonl");
        SimulationResult result;
        try (RequestLogWriter writer = new RequestLogWriter(detail, false)) {
            result = Simulation.single(engine, SimulationOptions.defaults(), writer).run(workload);
        }

        Map<Long, Boolean> cold = new HashMap<>();
        for (WorkloadRequest r : workload) {
            cold.put(r.index(), r.firstOfPrefixGroup());
        }
        double coldTtft = 0;
        double warmTtft = 0;
        int colds = 0;
        ObjectMapper json = new ObjectMapper();
        try (BufferedReader in = Files.newBufferedReader(detail)) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode n = json.readTree(line);
                if (cold.get(n.get("index").asLong())) {
                    coldTtft += n.get("ttft_ms").asDouble();
                    colds++;
                    assertEquals(0, n.get("cached_tokens").asInt(), "a cold request finds nothing cached");
                } else {
                    warmTtft += n.get("ttft_ms").asDouble();
                    assertEquals(PREFIX, n.get("cached_tokens").asInt(), "a warm request finds its whole prefix");
                }
            }
        }
        assertEquals(PREFIXES, colds);
        coldTtft /= colds;
        warmTtft /= REQUESTS - colds;
        assertTrue(warmTtft < 0.5 * coldTtft, "warm TTFT " + warmTtft + " ms vs cold " + coldTtft + " ms");

        double warmShare = ((PrefixRepetitionDataset) workload.dataset()).warmFraction(REQUESTS);
        double expectedHitRate = warmShare * PREFIX / (PREFIX + SUFFIX);
        double engineHitRate = (double) engine.kvCache().hitTokens() / engine.kvCache().queriedTokens();
        assertEquals(expectedHitRate, engineHitRate, 1e-9);
        assertEquals(expectedHitRate, result.report(SaturationTest.info()).result().prefixCacheHitRate(), 1e-9);
    }
}
