package dev.infersim.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.sim.GoodputSlo;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchmarkClientTest {

    @TempDir
    Path dir;

    static BenchConfig config(String baseUrl, Path detail) {
        return new BenchConfig(baseUrl, "/v1/completions", "m", null, true, 2_000, 1_000_000,
                GoodputSlo.NONE, List.of("ttft", "tpot", "itl", "e2el"), List.of(50.0, 99.0), 6000,
                baseUrl + "/metrics", 100, detail);
    }

    @Test
    void measuresWhatTheServerDid() throws Exception {
        try (FakeStreamingServer server = new FakeStreamingServer(30, 20, 2, 0, 0, 0);
             BenchmarkClient client = new BenchmarkClient(config(server.baseUrl(), dir.resolve("d.jsonl")))) {
            Workload w = Workload.open(WorkloadSpec.builder().numPrompts(3000).randomInputLen(200).randomOutputLen(10)
                    .requestRate(300).ignoreEos(true).seed(1).build());
            BenchResult r = client.run(w, 0, 0, 0, Map.of());
            r.printSummary(System.out);
            if (false) System.out.println(new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(r.fields()));
        }
    }
}
