package dev.infersim.demo;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.prediction.EnginePrediction;
import dev.infersim.prediction.WorkloadMoments;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import dev.infersim.workload.WorkloadSpecBuilder;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The demo's closed loop on a small deployment (llama-3.1-8b on an H100 with 16 sequences, the demo's workload):
 * concurrencies from 1 to twice the batch limit, Little's law in the simulation, the prediction against it, and the
 * shape a closed loop must have (throughput rising to the batch limit, then flat while latency grows with N).
 */
class DemoClosedLoopTest {
    private static final int BATCH = 16;
    private static DemoResult.ClosedLoop closedLoop;

    private static WorkloadSpecBuilder spec(long requests) {
        return WorkloadSpec.builder().datasetName("random").randomInputLen(512).randomOutputLen(1024).eosMeanTokens(128)
                .requestRate(Double.POSITIVE_INFINITY).numPrompts(requests).seed(7);
    }

    @BeforeAll
    static void run() {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(BATCH).build();
        EnginePrediction prediction = new EnginePrediction(d, WorkloadMoments.of(Workload.open(spec(50_000).build()), 50_000));
        closedLoop = DemoClosedLoop.run(prediction, DemoClosedLoopTest::spec, () -> EngineCore.create(d));
    }

    @Test
    void concurrenciesRunFromOneClientToTwiceTheBatchLimit() {
        assertEquals(List.of(1, 4, 16, 64, 256, 512), DemoClosedLoop.concurrencies(256));
        assertEquals(List.of(1, 4, 16, 32), DemoClosedLoop.concurrencies(16));
        assertEquals(List.of(1, 2), DemoClosedLoop.concurrencies(1));
        assertEquals(BATCH, closedLoop.batchLimit());
        assertEquals(List.of(1, 4, 16, 32), closedLoop.points().stream().map(DemoResult.ClosedLoopPoint::maxConcurrency).toList());
    }

    @Test
    void littlesLawHoldsInTheSimulationAtEveryConcurrency() {
        for (DemoResult.ClosedLoopPoint p : closedLoop.points()) {
            assertTrue(DemoClosedLoop.littlesLawError(p) <= DemoClosedLoop.LITTLES_LAW_TOLERANCE,
                    "N = " + p.maxConcurrency() + ": X x R = " + p.simulated().throughputTimesMeanE2el());
            // the prediction is a closed loop too: its X R is N by construction
            assertEquals(p.maxConcurrency(), p.predicted().throughputTimesMeanE2el(), 1e-6 * p.maxConcurrency());
        }
    }

    @Test
    void predictionIsWithinTenPercentOfTheSimulationAtEveryConcurrency() {
        for (DemoResult.ClosedLoopPoint p : closedLoop.points()) {
            assertTrue(DemoClosedLoop.predictionError(p) <= DemoClosedLoop.PREDICTION_TOLERANCE,
                    "N = " + p.maxConcurrency() + ": simulated " + p.simulated() + ", predicted " + p.predicted());
        }
    }

    @Test
    void throughputRisesToTheBatchLimitThenFlattensWhileLatencyGrows() {
        List<DemoResult.ClosedLoopPoint> pts = closedLoop.points();
        for (int i = 1; i < pts.size(); i++) {
            DemoResult.ClosedLoopSide before = pts.get(i - 1).simulated();
            DemoResult.ClosedLoopSide after = pts.get(i).simulated();
            assertTrue(after.meanE2elMs() > before.meanE2elMs(), "latency grows with N: " + pts);
            if (pts.get(i).maxConcurrency() <= BATCH) {
                assertTrue(after.requestThroughput() > 1.5 * before.requestThroughput(), "throughput rises below the limit: " + pts);
            } else {
                assertEquals(before.requestThroughput(), after.requestThroughput(), 0.05 * before.requestThroughput(),
                        "throughput flat past the limit: " + pts);
                // twice the clients in the same batch: each waits about twice as long
                assertEquals(2 * before.meanE2elMs(), after.meanE2elMs(), 0.15 * after.meanE2elMs(), "latency ~ N past the limit");
            }
        }
    }

    @Test
    void oneSequenceAtATimeIsNotRunAndSaysWhy() {
        Deployment one = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(1).build();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DemoPrediction chain = new DemoPrediction.Chain(
                new EnginePrediction(one, WorkloadMoments.of(Workload.open(spec(2_000).build()), 2_000)));
        assertNull(DemoClosedLoop.runAndPrint(chain, DemoClosedLoopTest::spec, () -> EngineCore.create(one),
                new PrintStream(bytes, true, StandardCharsets.UTF_8)));
        assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("Closed loop: not run for an engine that runs one "
                + "sequence at a time"), bytes.toString(StandardCharsets.UTF_8));
    }

    @Test
    void printsATableWithLittlesLawBesideEachConcurrency() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DemoClosedLoop.print(closedLoop, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("X x R (sim)") && out.contains("the engine sustains a batch of 16"), out);
        assertTrue(out.contains("of N at every N (tolerance 5%)") && out.contains("TTFT (tolerance 10%)"), out);
        assertEquals(closedLoop.points().size(), out.lines().filter(l -> l.matches("(1|4|16|32) +.*")).count(), out);
    }
}
