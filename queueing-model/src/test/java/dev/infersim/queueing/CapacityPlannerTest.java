package dev.infersim.queueing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CapacityPlannerTest {

    private static final BatchingServer SERVER =
            BatchingServer.linear(256, 1000, 200, new IterationTime(0.006, 0.00005, 0.00002));

    @Test
    void queueingDelayRootLandsOnTheBound() {
        SloCapacity capacity = CapacityPlanner.maxRateMeetingSlo(SERVER, Slo.none().withQueueingDelay(0.99, 0.5));
        assertEquals(SloMetric.QUEUEING_DELAY_PERCENTILE, capacity.bindingMetric());
        double p99 = ContinuousBatchingModel.of(SERVER, capacity.maxRatePerS()).queueingDelayPercentileSeconds(0.99);
        assertEquals(0.5, p99, 1e-6);
        assertTrue(capacity.maxRatePerS() < SERVER.saturationRatePerS());
    }

    @Test
    void meanTtftRootLandsOnTheBound() {
        SloCapacity capacity = CapacityPlanner.maxRateMeetingSlo(SERVER, Slo.none().withMeanTtft(0.2));
        assertEquals(SloMetric.MEAN_TTFT, capacity.bindingMetric());
        assertEquals(0.2, ContinuousBatchingModel.of(SERVER, capacity.maxRatePerS()).meanTtftSeconds(), 1e-6);
    }

    @Test
    void meanTpotBoundBetweenOneSequenceAndFullBatchLandsOnTheBound() {
        // tau(1) ~ 6.15 ms and tau(256) = 44.4 ms bracket a 30 ms bound.
        SloCapacity capacity = CapacityPlanner.maxRateMeetingSlo(SERVER, Slo.none().withMeanTpot(0.030));
        assertEquals(SloMetric.MEAN_TPOT, capacity.bindingMetric());
        assertEquals(0.030, ContinuousBatchingModel.of(SERVER, capacity.maxRatePerS()).meanTpotSeconds(), 1e-9);
    }

    @Test
    void tpotBoundAboveFullBatchIterationNeverBinds() {
        SloCapacity capacity = CapacityPlanner.maxRateMeetingSlo(SERVER, Slo.none().withMeanTpot(0.050));
        assertEquals(SloMetric.SATURATION, capacity.bindingMetric());
        assertEquals(SERVER.saturationRatePerS(), capacity.maxRatePerS(), 1e-12);
    }

    @Test
    void tpotBoundBelowSingleSequenceIterationIsInfeasible() {
        SloCapacity capacity = CapacityPlanner.maxRateMeetingSlo(SERVER, Slo.none().withMeanTpot(0.005));
        assertFalse(capacity.feasible());
        assertEquals(SloMetric.MEAN_TPOT, capacity.bindingMetric());
    }

    @Test
    void combinedObjectiveTakesTheTightestBound() {
        Slo slo = Slo.none().withQueueingDelay(0.99, 0.5).withMeanTpot(0.030).withMeanTtft(0.2);
        SloCapacity combined = CapacityPlanner.maxRateMeetingSlo(SERVER, slo);
        double tpotOnly = CapacityPlanner.maxRateMeetingSlo(SERVER, Slo.none().withMeanTpot(0.030)).maxRatePerS();
        double delayOnly =
                CapacityPlanner.maxRateMeetingSlo(SERVER, Slo.none().withQueueingDelay(0.99, 0.5)).maxRatePerS();
        double ttftOnly = CapacityPlanner.maxRateMeetingSlo(SERVER, Slo.none().withMeanTtft(0.2)).maxRatePerS();
        assertEquals(Math.min(tpotOnly, Math.min(delayOnly, ttftOnly)), combined.maxRatePerS(), 0);
    }

    @Test
    void erlangServerRootMatchesTheMmcPercentile() {
        // beta = 0 makes the replica an M/M/8 queue with mu = 2/s; the planner's rate must put its p95 wait at 0.25 s.
        BatchingServer erlang = BatchingServer.linear(8, 0, 25, IterationTime.decodeOnly(0.02, 0));
        SloCapacity capacity = CapacityPlanner.maxRateMeetingSlo(erlang, Slo.none().withQueueingDelay(0.95, 0.25));
        assertEquals(0.25, new MMcQueue(capacity.maxRatePerS(), 2.0, 8).waitPercentileSeconds(0.95), 1e-6);
    }

    @Test
    void fleetRoundsReplicasUpAfterHeadroom() {
        // 12/s per replica at 80% is 9.6/s usable: 100/s needs ceil(10.42) = 11 replicas.
        FleetPlan plan = FleetPlan.forTargetRate(100, 12, 0.2, 2);
        assertEquals(11, plan.replicas());
        assertEquals(22, plan.gpus());
        assertEquals(100.0 / 11, plan.ratePerReplicaPerS(), 1e-12);
        assertEquals(10, FleetPlan.forTargetRate(96, 12, 0.2, 1).replicas());
        assertEquals(1, FleetPlan.forTargetRate(0.5, 12, 0.2, 1).replicas());
    }

    @Test
    void fleetRejectsTooFewReplicas() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> new FleetPlan(100, 12, 0.2, 2, 10));
        assertTrue(e.getMessage().contains("replicas 10"), e.getMessage());
    }

    @Test
    void costPerMillionOutputTokensFollowsGpuHoursOverTokens() {
        // 22 GPUs at $2/h = $44/h; 100 req/s x 200 tokens = 20,000 tokens/s = 72M tokens/h: $0.6111 per million.
        FleetPlan plan = FleetPlan.forTargetRate(100, 12, 0.2, 2);
        assertEquals(44.0 / 72.0, plan.dollarsPerMillionOutputTokens(2.0, 200), 1e-12);
        assertEquals(1.0 / 3.6, FleetPlan.dollarsPerMillionOutputTokens(1.0, 1, 1000), 1e-12);
    }
}
