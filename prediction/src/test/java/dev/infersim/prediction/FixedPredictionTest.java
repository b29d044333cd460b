package dev.infersim.prediction;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.SchedulingPolicies;
import dev.infersim.result.PredictionResult;
import dev.infersim.result.RunHeader;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;


import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Past max-num-seqs, fixed timing queues as an M/G/c queue with c = max-num-seqs: the simulator in virtual time against
 * the closed form of {@code predict --timing fixed}.
 */
class FixedPredictionTest {

    private static PredictionResult<FixedPredictionKeys> simulateAndPredict(FixedTiming timing, int slots, double rate, WorkloadSpec spec,
                                                          double[] simulated) {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(slots).build();
        EngineCore engine = EngineCore.fixed(d, KvCapacity.of(d), SchedulingPolicies.byName("fcfs"), timing, 3);
        SimulationResult r = Simulation.single(engine, SimulationOptions.defaults(), null).run(Workload.open(spec));
        simulated[0] = r.stats().queueTime().meanMs();
        simulated[1] = r.stats().queueTime().percentileMs(99);
        simulated[2] = r.stats().ttft().meanMs();
        RunHeader run = new RunHeader("d", "infersim-predict", "m", "m", spec.numPrompts(), rate, 1.0, null, null, null,
                null);
        return new FixedPrediction(timing, slots, Workload.open(spec), 100_000).result(run, rate, 1, 16);
    }

    /**
     * Geometric outputs (mean 20) with TTFT = ITL make each service a geometric number of equal gaps: nearly exponential
     * (cs^2 = 0.95), where Allen-Cunneen is all but exact. 200,000 requests at 70% load on 4 slots.
     */
    @Test
    void queueingPastMaxNumSeqsMatchesTheMgcClosedForm() {
        FixedTiming timing = FixedTiming.of(10, 10);
        double rate = 0.7 * 4 / 0.2; // E[S] = 20 x 10 ms
        WorkloadSpec spec = WorkloadSpec.builder().datasetName("random").randomInputLen(16).randomOutputLen(100_000)
                .eosMeanTokens(20).requestRate(rate).normalizeDuration(false).numPrompts(200_000).seed(5).build();
        double[] sim = new double[3];
        PredictionResult<FixedPredictionKeys> f = simulateAndPredict(timing, 4, rate, spec, sim);
        assertEquals(0.7, f.model().utilization(), 0.01);
        double wait = f.model().meanQueueTimeMs();
        assertEquals(wait, sim[0], 0.05 * wait, "mean queue time");
        double p99 = f.model().p99QueueTimeMs();
        assertEquals(p99, sim[1], 0.05 * p99, "p99 queue time");
        double ttft = f.latencies().metric("ttft").meanMs();
        assertEquals(ttft, sim[2], 0.05 * ttft, "mean TTFT");
    }
}
