package dev.infersim.sim;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.StartupDelay;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AutoscaledFleetTest {
    private static final long S = 1_000_000_000L;
    private static final Deployment DEPLOYMENT =
            Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();

    @TempDir
    Path dir;

    /** 2 req/s, stepping to 60 req/s from 60 s to 180 s, for 700 s. */
    private Workload burst() throws IOException {
        Path file = dir.resolve("burst.yaml");
        Files.writeString(file, """
                name: burst
                load:
                  request_rate: 2
                  bursts: [{start_s: 60, duration_s: 120, request_rate: 60}]
                classes:
                  - {name: chat, input_tokens: 512, max_tokens: 128}
                """);
        return Workload.open(WorkloadSpec.builder().datasetName("workload").workloadProfile(file.toString())
                .numPrompts(8440).seed(3).build());
    }

    private static SimulationResult run(Workload workload, long startupNanos) {
        Autoscaler hpa = Autoscalers.byName("hpa", AutoscalerSpec.of(AutoscaleMetric.NUM_REQUESTS_RUNNING, 16, 1, 8));
        Fleet fleet = new Fleet(new Replica[] {new Replica(0, EngineCore.create(DEPLOYMENT))},
                () -> EngineCore.create(DEPLOYMENT), hpa, StartupDelay.ofSeconds(startupNanos / 1e9), 15 * S);
        return new Simulation(fleet, new LeastOutstandingRequestsRouter(), SimulationOptions.defaults(), null).run(workload);
    }

    @Test
    void hpaScalesOutForABurstAndBackInAfterTheStabilizationWindow() throws IOException {
        SimulationResult r = run(burst(), 30 * S);
        ReplicaSeries series = r.replicaSeries();
        assertEquals(8440, r.stats().completed());
        assertEquals(1, series.desiredAt(59 * S));
        int peak = 0;
        long firstUp = -1;
        long lastUp = -1;
        long firstDown = -1;
        for (int i = 1; i < series.size(); i++) {
            peak = Math.max(peak, series.desired(i));
            if (series.desired(i) > series.desired(i - 1)) {
                firstUp = firstUp < 0 ? series.timeNanos(i) : firstUp;
                lastUp = series.timeNanos(i);
            } else if (series.desired(i) < series.desired(i - 1) && firstDown < 0) {
                firstDown = series.timeNanos(i);
            }
        }
        assertTrue(peak >= 4, "the burst needs several replicas: " + peak);
        // the first sync that can see the burst: sync at 75 s reads the scrape of 60 s, the burst's first instant
        assertTrue(firstUp >= 75 * S && firstUp <= 90 * S, "first scale-up at " + firstUp / 1e9);
        // nothing is removed while a recommendation at least as high as the fleet is under 300 s old
        assertTrue(firstDown >= lastUp + 300 * S, "first scale-down at " + firstDown / 1e9 + " s, last scale-up at "
                + lastUp / 1e9 + " s");
        // back to one replica for 2 req/s once the syncs that saw the burst (the last reads the scrape at its end,
        // 180 s, at 195 s) have left the window
        long backToOne = -1;
        for (int i = 0; i < series.size(); i++) {
            backToOne = series.desired(i) == 1 ? series.timeNanos(i) : backToOne;
        }
        assertEquals(1, series.desired(series.size() - 1));
        assertTrue(backToOne >= 480 * S && backToOne <= 510 * S, "back to one replica at " + backToOne / 1e9 + " s");
        for (Replica replica : r.replicas()) {
            assertEquals(0, replica.createdNanos() % (15 * S), "replicas start at syncs");
            if (replica.id() > 0) {
                assertEquals(30 * S, replica.readyNanos() - replica.createdNanos(), "each new replica pays its cold start");
                assertTrue(replica.engine().steps() > 0, "replica " + replica.id() + " served");
                assertTrue(replica.retiredNanos() >= firstDown, "scaled-in replicas drained and retired");
            }
        }
        // ready follows desired one cold start later
        for (int i = 1; i < series.size(); i++) {
            if (series.desired(i) > series.desired(i - 1)) {
                long t = series.timeNanos(i);
                assertTrue(series.readyAt(t + 30 * S - 1) < series.desired(i) && series.readyAt(t + 30 * S) >= series.desired(i),
                        "ready reaches " + series.desired(i) + " at " + (t + 30 * S) / 1e9 + " s");
            }
        }
    }

    @Test
    void gpuSecondsCountColdStartsAndStopAtRetirement() throws IOException {
        SimulationResult r = run(burst(), 30 * S);
        double byHand = 0;
        long end = 0;
        for (Replica replica : r.replicas()) {
            end = Math.max(end, replica.lastStepEndNanos());
        }
        for (Replica replica : r.replicas()) {
            long until = replica.retiredNanos() >= 0 ? replica.retiredNanos() : end;
            byHand += (until - replica.createdNanos()) / 1e9;
        }
        assertEquals(byHand, r.gpuSeconds(), 1e-6);
        assertTrue(r.gpuSeconds() < 8 * end / 1e9, "less than the peak fleet held all along");
        assertTrue(r.gpuSeconds() > end / 1e9, "more than one replica all along");
    }

    @Test
    void aFixedFleetHoldsItsGpusForTheWholeRun() {
        Deployment tp2 = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).tensorParallelSize(2).build();
        Replica[] two = {new Replica(0, EngineCore.create(tp2)), new Replica(1, EngineCore.create(tp2))};
        SimulationResult r = new Simulation(two, new RoundRobinRouter(), SimulationOptions.defaults().withDollarsPerGpuHour(3.6), null)
                .run(Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(256).randomOutputLen(32)
                        .numPrompts(200).seed(1).build()));
        assertEquals(4 * r.durationNanos() / 1e9, r.gpuSeconds(), 1e-9);
        SimulatorKeys keys = r.simulatorKeys();
        assertEquals(r.gpuSeconds() / 1000, keys.costDollars(), 1e-12);
        assertArrayEquals(new int[] {2}, keys.replicas().ready());
    }

    @Test
    void theSameSeedGivesTheSameScalingDecisions() throws IOException {
        ReplicaSeries a = run(burst(), 20 * S).replicaSeries();
        ReplicaSeries b = run(burst(), 20 * S).replicaSeries();
        assertEquals(a.size(), b.size());
        for (int i = 0; i < a.size(); i++) {
            assertEquals(a.timeNanos(i), b.timeNanos(i));
            assertEquals(a.desired(i), b.desired(i));
        }
    }
}
