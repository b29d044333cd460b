package dev.infersim.sim;

import dev.infersim.engine.BatchShape;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.KvTransferLink;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DisaggregatedSimulationTest {
    private static final Deployment D = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b"))
            .maxNumSeqs(64).enablePrefixCaching(false).build();
    private static final KvTransferLink LINK = new KvTransferLink(50, 1);

    private static Replica[] replicas(int n, int firstId) {
        Replica[] r = new Replica[n];
        for (int i = 0; i < n; i++) {
            r[i] = new Replica(firstId + i, EngineCore.create(D));
        }
        return r;
    }

    private static DisaggregatedFleet fleet(int p, int d) {
        return new DisaggregatedFleet(replicas(p, 0), new RoundRobinRouter(), replicas(d, p),
                new LeastOutstandingRequestsRouter(), LINK);
    }

    private static Workload workload(int input, int output, double rate, int n) {
        return Workload.open(WorkloadSpec.builder().datasetName("random").randomInputLen(input).randomOutputLen(output)
                .randomRangeRatio(0).requestRate(rate).numPrompts(n).seed(3).build());
    }

    @Test
    void oneRequestsTtftIsItsPrefillThenTheTransferThenOneStep() {
        SimulationResult r = new Simulation(fleet(1, 1), SimulationOptions.defaults(), null).run(workload(1000, 10, 1, 1));

        RooflineCostModel cost = new RooflineCostModel(D);
        long prefill = cost.stepNanos(new BatchShape().addPrefill(1000, 0, true));
        long transfer = LINK.transferNanos(1000, KvCapacity.kvBytesPerTokenPerGpu(D));
        long firstStep = cost.stepNanos(new BatchShape().addPrefill(1, 999, true));
        assertEquals((prefill + transfer + firstStep) / 1e6, r.stats().ttft().meanMs(), 1e-6);
        assertEquals(10, r.stats().outputTokens(), "the prefill's token is the proxy's, not the client's");
        assertEquals(prefill / 1e6 + (transfer + firstStep) / 1e6, r.stats().prefillTime().meanMs(), 1e-6);
        assertEquals(0, r.stats().queueTime().meanMs(), 1e-9);
    }

    @Test
    void everyHeldBlockIsReleasedOnBothPools() {
        DisaggregatedFleet pd = fleet(2, 2);
        SimulationResult r = new Simulation(pd, SimulationOptions.defaults(), null).run(workload(2000, 100, 8, 300));

        assertEquals(300, r.stats().completed());
        for (Replica p : pd.prefillReplicas()) {
            assertEquals(0, p.engine().kvHeldCount());
            assertEquals(0, p.engine().kvCache().usedBlocks());
            assertEquals(150, p.engine().outputTokens(), "round robin: one token for each of its 150 requests");
        }
        long transfers = 0;
        for (Replica d : pd.decodeReplicas()) {
            assertEquals(0, d.engine().kvCache().usedBlocks());
            assertEquals(2000 * d.engine().kvTransfers(), d.engine().kvTransferredTokens());
            assertEquals(0, d.engine().promptTokensComputed() - d.engine().kvTransfers(), "one prompt token each");
            transfers += d.engine().kvTransfers();
        }
        assertEquals(300, transfers);
        DisaggregatedFleet.Pools pools = r.simulatorKeys().disaggregation();
        assertEquals(300L, pools.kvTransfers());
        assertEquals(2, pools.prefill().replicas());
        assertEquals(2, pools.decode().gpus());
        assertTrue(r.littlesLawError() < 0.01);
        double oneDecode = new RooflineCostModel(D).stepNanos(new BatchShape().addDecode(2000)) / 1e6;
        assertTrue(r.stats().itl().histogram().getMinValue() / 1e6 >= oneDecode * 0.999,
                "no gap between tokens is shorter than a decode step: " + r.stats().itl().histogram().getMinValue() / 1e6);
    }

    @Test
    void decodeStepsCarryNoPrefillSoTpotStaysAtTheDecodeStep() {
        // Long prompts at a rate where the aggregated engine's decodes share steps with 4,000-token prefill chunks.
        Workload w = workload(4000, 200, 4, 200);
        SimulationResult aggregated = new Simulation(replicas(2, 0), new RoundRobinRouter(), SimulationOptions.defaults(), null)
                .run(w);
        SimulationResult split = new Simulation(fleet(1, 1), SimulationOptions.defaults(), null)
                .run(workload(4000, 200, 4, 200));
        assertTrue(split.stats().tpot().percentileMs(90) < 0.9 * aggregated.stats().tpot().percentileMs(90),
                "P90 TPOT " + split.stats().tpot().percentileMs(90) + " ms split vs " + aggregated.stats().tpot().percentileMs(90)
                        + " ms aggregated");
    }
}
