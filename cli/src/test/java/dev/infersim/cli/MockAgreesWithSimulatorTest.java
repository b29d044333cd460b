package dev.infersim.cli;

import dev.infersim.bench.BenchConfig;
import dev.infersim.bench.BenchResult;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.server.MockServer;
import dev.infersim.server.OutputLengths;
import dev.infersim.server.ServerOptions;
import dev.infersim.sim.GoodputSlo;
import dev.infersim.sim.Replica;
import dev.infersim.sim.Router;
import dev.infersim.sim.RunInfo;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The mock server measured over HTTP by the benchmark client agrees with the discrete-event simulator on the same
 * seeded workload: both run the same engine, one on the wall clock and one in virtual time, so below saturation the
 * client's TTFT and TPOT percentiles match the simulator's within 5%.
 */
class MockAgreesWithSimulatorTest {
    private static final long SEED = 4;

    private static WorkloadSpec spec(double ratePerS) {
        return WorkloadSpec.builder().datasetName("random").randomInputLen(512).randomOutputLen(256).eosMeanTokens(64)
                .requestRate(ratePerS).numPrompts(220).seed(SEED).build();
    }

    @Test
    void clientMeasuresWhatTheSimulatorPredicts() throws Exception {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        double rate = 15;
        MockServer server = MockServer.start(ServerOptions.builder(d).port(0).timeScale(1).seed(SEED)
                        .outputLengths(OutputLengths.parse("fixed:256")).build())
                .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        Map<String, Object> measured;
        try (BenchmarkClient client = new BenchmarkClient(new BenchConfig(server.baseUrl(), "/v1/completions",
                server.options().servedModelName(), null, false, 60_000, 5_000_000, GoodputSlo.NONE,
                List.of("ttft", "tpot"), List.of(50.0, 99.0), 1024, null, 500, null))) {
            BenchResult r = client.run(Workload.open(spec(rate)), 20, 0, 0, Map.of());
            measured = r.fields();
        } finally {
            server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        EngineCore engine = EngineCore.create(d);
        Map<String, Object> simulated = new Simulation(new Replica[] {new Replica(0, engine)}, Router.byName("round-robin"),
                SimulationOptions.defaults().withWarmups(20), null).run(Workload.open(spec(rate)))
                .report(new RunInfo("", "infersim", "m", "m", 200, rate, 1, 0, List.of("ttft", "tpot"), List.of(50.0, 99.0)))
                .fields();

        System.out.println("DEBUG " + measured.get("infersim_ground_truth") + " lag " + measured.get("infersim_send_lag_ms") + " server queue " + measured.get("infersim_median_queue_time_ms") + " sim queue " + simulated.get("infersim_median_queue_time_ms"));
        assertEquals(simulated.get("total_output_tokens"), measured.get("total_output_tokens"), "the very same requests");
        for (String key : List.of("median_ttft_ms", "p99_ttft_ms", "median_tpot_ms", "p99_tpot_ms")) {
            double sim = ((Number) simulated.get(key)).doubleValue();
            double real = ((Number) measured.get(key)).doubleValue();
            assertEquals(sim, real, 0.05 * sim, key + ": simulated " + sim + " ms, measured " + real + " ms");
        }
    }
}
