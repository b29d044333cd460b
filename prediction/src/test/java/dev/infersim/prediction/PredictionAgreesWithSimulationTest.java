package dev.infersim.prediction;

import dev.infersim.engine.BatchShape;
import dev.infersim.engine.CostModel;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.KvCapacity;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.SchedulingPolicies;
import dev.infersim.queueing.LatencyModel;
import dev.infersim.queueing.MG1Queue;
import dev.infersim.queueing.MM1Queue;
import dev.infersim.queueing.MMcQueue;
import dev.infersim.sim.Replica;
import dev.infersim.sim.RoundRobinRouter;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The closed form against the discrete-event simulator, both driven through the same engine. With an iteration time
 * tau(b) = alpha + beta b and geometric output lengths the continuous-batching chain is exact up to the discreteness
 * of iterations; with beta = 0 it is M/M/c with c = --max-num-seqs. The chain's iteration-boundary and prefill terms
 * are approximations that lose accuracy as the load nears saturation, so the 5% checks run at 50% and 70%; the wider
 * matrix is QueueingAgreesWithSimulatorTest.
 */
class PredictionAgreesWithSimulationTest {
    private static final double ALPHA_S = 0.002;
    private static final int PROMPT_TOKENS = 16;

    /**
     * tau = alpha + beta x (decode sequences) + beta / 16 x (prefill tokens): linear in what the chain's iteration time
     * counts, and a 16-token prompt costs its step as much as one decoding sequence.
     */
    private record LinearCost(double alphaS, double betaS) implements CostModel {
        @Override
        public long stepNanos(BatchShape shape) {
            return Math.round((alphaS + betaS * shape.decodeSeqs() + betaS / PROMPT_TOKENS * shape.prefillTokens()) * 1e9);
        }
    }

    private static Deployment deployment(int maxNumSeqs) {
        return Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b"))
                .maxNumSeqs(maxNumSeqs).maxNumBatchedTokens(4096).enablePrefixCaching(false).build();
    }

    private static WorkloadSpec workload(double ratePerS, double meanOutputTokens, int requests, long seed) {
        return WorkloadSpec.builder().datasetName("random").randomInputLen(PROMPT_TOKENS).randomOutputLen(20_000)
                .eosMeanTokens(meanOutputTokens).requestRate(ratePerS).normalizeDuration(false)
                .numPrompts(requests).seed(seed).build();
    }

    private static SimulationResult simulate(Deployment d, CostModel cost, WorkloadSpec spec, long warmups) {
        EngineCore engine = new EngineCore(d, KvCapacity.of(d), cost, SchedulingPolicies.byName("fcfs"));
        return new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(),
                SimulationOptions.defaults().withWarmups(warmups), null).run(Workload.open(spec));
    }

    @Test
    void constantIterationTimeIsErlangC() {
        int servers = 4;
        double meanOutput = 50;
        double mu = 1 / (meanOutput * ALPHA_S);
        double rate = 0.75 * servers * mu;
        Deployment d = deployment(servers);
        CostModel cost = new LinearCost(ALPHA_S, 0);
        WorkloadSpec spec = workload(rate, meanOutput, 300_000, 21);
        EnginePrediction prediction = new EnginePrediction(d, cost, WorkloadMoments.of(Workload.open(spec), 300_000));
        LatencyModel chain = prediction.at(rate);

        MMcQueue mmc = new MMcQueue(rate, 1 / (prediction.moments().meanOutputTokens() * ALPHA_S), servers);
        assertEquals(mmc.probabilityOfWait(), chain.probabilityOfWait(), 1e-9, "the chain with beta = 0 is M/M/c");

        SimulationResult sim = simulate(d, cost, spec, 10_000);
        // the engine's TTFT: wait for a free slot (Erlang C), then for the running iteration to end, then the prefill iteration
        double simTtftMs = sim.stats().ttft().meanMs();
        assertEquals(1e3 * chain.meanTtftSeconds(), simTtftMs, 0.03 * simTtftMs, "mean TTFT");
        double simE2elMs = sim.stats().e2el().meanMs();
        assertEquals(1e3 * chain.meanE2elSeconds(), simE2elMs, 0.03 * simE2elMs, "mean E2EL");
    }

    @Test
    void linearIterationTimeMatchesTheContinuousBatchingChain() {
        int maxNumSeqs = 32;
        double meanOutput = 40;
        Deployment d = deployment(maxNumSeqs);
        CostModel cost = new LinearCost(ALPHA_S, 0.0002);
        WorkloadSpec probe = workload(1, meanOutput, 200_000, 5);
        EnginePrediction prediction = new EnginePrediction(d, cost, WorkloadMoments.of(Workload.open(probe), 200_000));
        double saturation = prediction.saturationRatePerS();
        double meanOutputTokens = prediction.moments().meanOutputTokens();
        double tauAtB = ALPHA_S + 0.0002 * maxNumSeqs * (1 + 1 / meanOutputTokens); // b decodes plus b / E[L] prompts
        assertEquals(maxNumSeqs / (meanOutputTokens * tauAtB), saturation, 1e-6 * saturation);

        for (double load : new double[] {0.5, 0.7}) {
            double rate = load * saturation;
            WorkloadSpec spec = workload(rate, meanOutput, 200_000, 6);
            LatencyModel chain = prediction.at(rate);
            SimulationResult sim = simulate(d, cost, spec, 10_000);
            double simTtftMs = sim.stats().ttft().meanMs();
            double simE2elMs = sim.stats().e2el().meanMs();
            assertEquals(1e3 * chain.meanTtftSeconds(), simTtftMs, 0.05 * simTtftMs, "mean TTFT at load " + load);
            assertEquals(1e3 * chain.meanE2elSeconds(), simE2elMs, 0.05 * simE2elMs, "mean E2EL at load " + load);
        }

        // above saturation the simulated engine completes requests at the predicted saturation rate
        SimulationResult overload = simulate(d, cost, workload(1.5 * saturation, meanOutput, 100_000, 7), 0);
        assertTrue(overload.saturation().saturated(), overload.saturation().reason());
        double completedPerS = overload.stats().completed() / (overload.durationNanos() / 1e9);
        assertEquals(saturation, completedPerS, 0.05 * saturation, "throughput at overload = saturation rate");
    }

    /** A single server: one sequence at a time, one output token, and the whole service charged to its one step. */
    private static SimulationResult singleServer(CostModel service, double rate, long seed) {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(1)
                .maxNumBatchedTokens(2048).build();
        WorkloadSpec spec = WorkloadSpec.builder().datasetName("random").randomInputLen(PROMPT_TOKENS).randomOutputLen(1)
                .requestRate(rate).normalizeDuration(false).numPrompts(300_000).seed(seed).build();
        return simulate(d, service, spec, 0);
    }

    @Test
    void singleServerEngineMatchesMm1AndMd1() {
        double mu = 1000;
        double rate = 600;
        SplittableRandom rng = new SplittableRandom(3);
        SimulationResult exponential = singleServer(shape -> Math.round(-1e9 / mu * Math.log(1 - rng.nextDouble())), rate, 8);
        double mm1 = 1e3 * new MM1Queue(rate, mu).meanWaitSeconds();
        assertEquals(mm1, exponential.stats().queueTime().meanMs(), 0.03 * mm1, "M/M/1 mean wait");
        double mm1p99 = 1e3 * new MM1Queue(rate, mu).waitPercentileSeconds(0.99);
        assertEquals(mm1p99, exponential.stats().queueTime().percentileMs(99), 0.03 * mm1p99, "M/M/1 p99 wait");

        SimulationResult constant = singleServer(shape -> Math.round(1e9 / mu), rate, 9);
        double md1 = 1e3 * MG1Queue.deterministic(rate, 1 / mu).meanWaitSeconds();
        assertEquals(md1, constant.stats().queueTime().meanMs(), 0.03 * md1, "M/D/1 mean wait");
    }
}
