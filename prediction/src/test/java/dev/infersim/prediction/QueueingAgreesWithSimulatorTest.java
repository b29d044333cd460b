package dev.infersim.prediction;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.queueing.ClosedLoopBatchingModel;
import dev.infersim.queueing.ContinuousBatchingModel;
import dev.infersim.queueing.LatencyModel;
import dev.infersim.sim.Replica;
import dev.infersim.sim.RoundRobinRouter;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import dev.infersim.workload.WorkloadSpecBuilder;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.DoubleFunction;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code predict} against the discrete-event simulator over a matrix of deployments and workloads, both driven by the
 * same engine model: one request at a time (M/D/1, M/G/1, bursty G/G/1), continuous batching at several loads and
 * with bursty and smooth arrivals, prefix caching on and off, KV-cache pressure with preemption, chunked prefill on and
 * off, two GPUs, three models (one MoE with tensor parallel 2). Textbook cases must match the simulator's mean wait within 3%; every other scenario its
 * mean TTFT, mean TPOT and throughput within 10% and its p99 TTFT and p99 E2EL within 20%. Where such a scenario's
 * rate is a load, a share of the predicted saturation rate, that rate must also be within 3% of the simulator's
 * throughput when offered 1.5 times it: an error there moves every other number. Every such row runs again at load
 * 0.9 ({@link #HEAVY_LOAD}), where errors in the admission wait show most. The table is printed;
 * bench/queueing/README.md keeps it with the command. The scenarios in {@link #KNOWN_MISSES} do not meet the thresholds
 * yet: they are run and printed, and the README says by how much and why; every other scenario is asserted.
 */
class QueueingAgreesWithSimulatorTest {
    private static final long SEED = 42;

    /** Scenarios the models do not yet meet the thresholds in, with the reason (see bench/queueing/README.md). */
    static final Map<String, String> KNOWN_MISSES = Map.of(
            "KV pressure, geometric outputs load 0.9", "mean TTFT 11% short: with geometric outputs the simulator's queue "
                    + "at the KV limit drains more slowly than the chain's exponential wait",
            "chunked prefill on, budget 512 load 0.9", "mean TTFT 12% short (p99 TTFT 18% long): the chain's wait above "
                    + "the budget's batch limit is exponential, too short on average and too long in its tail",
            "KV pressure, preemption load 0.9", "mean TTFT 12.8% short (TPOT and throughput within 2%): since a "
                    + "preempted request finds its own blocks in the prefix cache again, as in vLLM V1, the model "
                    + "recomputes only the E[L] tokens eaten from its tail, which at load 0.9 underprices the wait",
            "qwen2.5-7b load 0.7", "saturation rate 4.0% under the simulator's since the H100 profile was refitted to "
                    + "fused-kernel steps (1.9% before): the row whose completion rate peaks before its batch limit",
            "qwen2.5-7b load 0.9", "p99 TTFT 22% long (mean TTFT within 5%) at a rate set from the saturation rate "
                    + "that the load 0.7 row misses by 4%");

    enum Kind { TEXTBOOK, ENGINE }

    /** One row: a deployment, a workload at a rate, and whether the rate is a share of the predicted saturation. */
    record Scenario(String name, Kind kind, Deployment deployment, DoubleFunction<WorkloadSpec> workloadAt,
                    double rateOrLoad, boolean isLoad, int requests) {
    }

    /** @param capacity predicted saturation rate and the simulator's throughput when overloaded; null when not checked */
    record Outcome(Scenario scenario, double rate, double[] predicted, double[] simulated, double[] capacity,
                   List<String> failures) {
    }

    /** Offered load, over the predicted saturation rate, at which the simulator's throughput is its capacity. */
    private static final double OVERLOAD = 1.5;
    private static final double CAPACITY_TOLERANCE = 0.03;

    private static final String[] METRICS = {"mean wait", "mean TTFT", "mean TPOT", "throughput", "p99 TTFT", "p99 E2EL"};

    private static Deployment.Builder llama8b(String gpu) {
        return Deployment.builder(Profiles.gpu(gpu), Profiles.model("llama-3.1-8b"));
    }

    private static WorkloadSpecBuilder random(int requests, double rate, int input, int output, double range) {
        return WorkloadSpec.builder().datasetName("random").randomInputLen(input).randomOutputLen(output)
                .randomRangeRatio(range).requestRate(rate).numPrompts(requests).seed(SEED);
    }

    static List<Scenario> scenarios() {
        List<Scenario> s = new ArrayList<>();
        Deployment single = llama8b("h100").maxNumSeqs(1).maxNumBatchedTokens(2048).enablePrefixCaching(false).build();
        int textbook = 400_000;
        for (double load : new double[] {0.5, 0.8, 0.9}) {
            s.add(new Scenario("M/D/1 load " + load, Kind.TEXTBOOK, single,
                    r -> random(textbook, r, 256, 8, 0).build(), load, true, textbook));
        }
        for (double load : new double[] {0.5, 0.8, 0.9}) {
            s.add(new Scenario("M/G/1 load " + load, Kind.TEXTBOOK, single,
                    r -> random(textbook, r, 256, 64, 0.5).eosMeanTokens(16).build(), load, true, textbook));
        }
        for (double burstiness : new double[] {0.25, 4}) {
            s.add(new Scenario("G/G/1 burstiness " + burstiness + " load 0.7", Kind.ENGINE, single,
                    r -> random(120_000, r, 256, 64, 0.5).eosMeanTokens(16).burstiness(burstiness).build(), 0.7, true, 120_000));
        }
        int n = 20_000;
        Deployment batching = llama8b("h100").build();
        for (double load : new double[] {0.5, 0.8}) {
            s.add(new Scenario("batching 8B H100 load " + load, Kind.ENGINE, batching,
                    r -> random(n, r, 512, 512, 0.5).eosMeanTokens(128).build(), load, true, n));
        }
        for (double burstiness : new double[] {0.25, 4}) {
            s.add(new Scenario("batching burstiness " + burstiness + " load 0.7", Kind.ENGINE, batching,
                    r -> random(n, r, 512, 512, 0.5).eosMeanTokens(128).burstiness(burstiness).build(), 0.7, true, n));
        }
        for (boolean caching : new boolean[] {true, false}) {
            s.add(new Scenario("prefix caching " + (caching ? "on" : "off"), Kind.ENGINE,
                    llama8b("h100").enablePrefixCaching(caching).build(),
                    r -> WorkloadSpec.builder().datasetName("prefix_repetition").prefixRepetitionPrefixLen(1024)
                            .prefixRepetitionSuffixLen(128).prefixRepetitionNumPrefixes(10).prefixRepetitionOutputLen(128)
                            .requestRate(r).numPrompts(n).seed(SEED).build(), 20, false, n));
        }
        Deployment smallCache = llama8b("h100").gpuMemoryUtilization(0.25).build();
        s.add(new Scenario("KV pressure, preemption load 0.8", Kind.ENGINE, smallCache,
                r -> random(n, r, 512, 512, 0).build(), 0.8, true, n));
        s.add(new Scenario("KV pressure, geometric outputs load 0.8", Kind.ENGINE, smallCache,
                r -> random(n, r, 512, 512, 0.5).eosMeanTokens(128).build(), 0.8, true, n));
        s.add(new Scenario("chunked prefill on, budget 512", Kind.ENGINE, llama8b("h100").maxNumBatchedTokens(512).build(),
                r -> random(n, r, 2048, 256, 0.5).eosMeanTokens(96).build(), 0.7, true, n));
        s.add(new Scenario("chunked prefill off", Kind.ENGINE,
                llama8b("h100").enableChunkedPrefill(false).maxModelLen(8192).build(),
                r -> random(n, r, 2048, 256, 0.5).eosMeanTokens(96).build(), 0.7, true, n));
        s.add(new Scenario("H200 load 0.8", Kind.ENGINE, llama8b("h200").build(),
                r -> random(n, r, 512, 512, 0.5).eosMeanTokens(128).build(), 0.8, true, n));
        s.add(new Scenario("mixtral-8x7b TP2 load 0.7", Kind.ENGINE,
                Deployment.builder(Profiles.gpu("h100"), Profiles.model("mixtral-8x7b")).tensorParallelSize(2).build(),
                r -> random(n, r, 512, 512, 0.5).eosMeanTokens(128).build(), 0.7, true, n));
        s.add(new Scenario("qwen2.5-7b load 0.7", Kind.ENGINE,
                Deployment.builder(Profiles.gpu("h100"), Profiles.model("qwen2.5-7b")).build(),
                r -> random(n, r, 1024, 256, 0.5).eosMeanTokens(64).build(), 0.7, true, n));
        return withHeavyLoad(s);
    }

    /** The load of the heavy rows: every engine row whose rate is a load, again at this share of its saturation rate. */
    static final double HEAVY_LOAD = 0.9;

    /** Adds each engine row whose rate is a load at {@link #HEAVY_LOAD}, once per deployment and workload. */
    private static List<Scenario> withHeavyLoad(List<Scenario> matrix) {
        List<Scenario> all = new ArrayList<>(matrix);
        java.util.Set<String> added = new java.util.HashSet<>();
        for (Scenario sc : matrix) {
            if (sc.kind() != Kind.ENGINE || !sc.isLoad() || sc.rateOrLoad() == HEAVY_LOAD) {
                continue;
            }
            String name = sc.name().replaceFirst(" load [0-9.]+$", "") + " load " + HEAVY_LOAD;
            if (added.add(name)) {
                all.add(new Scenario(name, sc.kind(), sc.deployment(), sc.workloadAt(), HEAVY_LOAD, true, sc.requests()));
            }
        }
        return all;
    }

    static Outcome run(Scenario sc) {
        WorkloadSpec probe = sc.workloadAt().apply(1);
        EnginePrediction prediction = new EnginePrediction(sc.deployment(), WorkloadMoments.of(Workload.open(probe), 100_000));
        double rate = sc.isLoad() ? sc.rateOrLoad() * prediction.saturationRatePerS() : sc.rateOrLoad();
        WorkloadSpec spec = sc.workloadAt().apply(rate);
        LatencyModel model = prediction.at(rate, 1 / spec.load().burstiness());
        double[] predicted = {
                1e3 * (model.meanQueueingDelaySeconds()
                        + (model instanceof ContinuousBatchingModel c ? c.meanIterationBoundaryWaitSeconds() : 0)), 1e3 * model.meanTtftSeconds(), 1e3 * model.meanTpotSeconds(), rate,
                1e3 * model.ttftPercentileSeconds(0.99), 1e3 * model.e2elPercentileSeconds(0.99)};
        SimulationResult sim = simulate(sc.deployment(), spec, sc.requests() / 10);
        double[] simulated = {
                sim.stats().queueTime().meanMs(), sim.stats().ttft().meanMs(), sim.stats().tpot().meanMs(),
                sim.stats().steadyRequestThroughput(), sim.stats().ttft().percentileMs(99), sim.stats().e2el().percentileMs(99)};
        List<String> failures = new ArrayList<>();
        if (sc.kind() == Kind.TEXTBOOK) {
            check(failures, 0, predicted, simulated, 0.03);
        } else {
            for (int m = 1; m <= 3; m++) {
                check(failures, m, predicted, simulated, 0.10);
            }
            for (int m = 4; m <= 5; m++) {
                check(failures, m, predicted, simulated, 0.20);
            }
        }
        double[] capacity = null;
        // a heavy row's deployment and workload are its base row's, which checks their capacity
        if (sc.isLoad() && sc.kind() == Kind.ENGINE && sc.rateOrLoad() < HEAVY_LOAD) {
            double saturation = prediction.saturationRatePerS();
            WorkloadSpec overloaded = sc.workloadAt().apply(OVERLOAD * saturation);
            capacity = new double[] {saturation,
                    simulate(sc.deployment(), overloaded, sc.requests() / 10).stats().steadyRequestThroughput()};
            double error = capacity[0] / capacity[1] - 1;
            if (!(Math.abs(error) <= CAPACITY_TOLERANCE)) {
                failures.add(String.format(Locale.ROOT, "saturation rate %+.1f%% (limit %.0f%%)", 100 * error,
                        100 * CAPACITY_TOLERANCE));
            }
        }
        return new Outcome(sc, rate, predicted, simulated, capacity, failures);
    }

    private static void check(List<String> failures, int metric, double[] predicted, double[] simulated, double tolerance) {
        double error = predicted[metric] / simulated[metric] - 1;
        if (!(Math.abs(error) <= tolerance)) {
            failures.add(String.format(Locale.ROOT, "%s %+.1f%% (limit %.0f%%)", METRICS[metric], 100 * error, 100 * tolerance));
        }
    }

    private static SimulationResult simulate(Deployment d, WorkloadSpec spec, long warmups) {
        return new Simulation(new Replica[] {new Replica(0, EngineCore.create(d))}, new RoundRobinRouter(),
                SimulationOptions.defaults().withWarmups(warmups), null).run(Workload.open(spec));
    }

    static String table(List<Outcome> outcomes) {
        StringBuilder t = new StringBuilder();
        t.append("| scenario | rate req/s | ");
        for (String m : METRICS) {
            t.append(m).append(m.equals("throughput") ? " req/s" : " ms").append(" pred / sim (err) | ");
        }
        t.append("verdict |\n|---|---|");
        t.append("---|".repeat(METRICS.length)).append("---|\n");
        for (Outcome o : outcomes) {
            t.append(String.format(Locale.ROOT, "| %s | %.3f | ", o.scenario().name(), o.rate()));
            for (int m = 0; m < METRICS.length; m++) {
                t.append(String.format(Locale.ROOT, "%.2f / %.2f (%+.1f%%) | ", o.predicted()[m], o.simulated()[m],
                        100 * (o.predicted()[m] / o.simulated()[m] - 1)));
            }
            String verdict = o.failures().isEmpty() ? "pass"
                    : (KNOWN_MISSES.containsKey(o.scenario().name()) ? "known miss: " : "FAIL: ") + String.join(", ", o.failures());
            t.append(verdict).append(" |\n");
        }
        for (Outcome o : outcomes) {
            if (o.capacity() != null) {
                t.append(String.format(Locale.ROOT, "%n%s: saturation rate %.3f req/s predicted, %.3f req/s simulated at %.1fx "
                                + "that offered (%+.1f%%)%n", o.scenario().name(), o.capacity()[0], o.capacity()[1], OVERLOAD,
                        100 * (o.capacity()[0] / o.capacity()[1] - 1)));
            }
        }
        return t.toString();
    }

    /**
     * {@code predict --max-concurrency N} (a closed loop, {@link dev.infersim.queueing.ClosedLoopBatchingModel}) against
     * the simulator's closed loop from one client to past the batch and KV limits, with equal lengths (the lock step,
     * its prompts in groups where the token budget splits them, or each prompt spilling into the next one's iterations
     * where one overflows the budget), nearly equal ones (+-2%: a cohort that dissolves over
     * hundreds of rounds) and lengths that vary (+-50%: dissolved within a few): mean TTFT, mean TPOT and throughput
     * within 10%, over the requests after the first 3N (the start-up burst), which both leave out. The simulator's
     * throughput is N / its mean E2EL (Little's law, exact for a closed loop with no think time): its steady rate counts
     * the sends of a window, whose ends cut the lock step's bursts of completions.
     */
    @Test
    void closedLoopPredictAgreesWithTheSimulatorFromOneClientToPastTheLimits() {
        Deployment h100 = llama8b("h100").build();
        record Row(String name, int input, int output, double range, int clients, int requests) {
        }
        List<Row> rows = new ArrayList<>();
        for (int n : new int[] {1, 8, 32, 128, 256}) {
            rows.add(new Row("closed loop, fixed 512/256, N=" + n, 512, 256, 0, n, Math.max(400, 16 * n)));
        }
        rows.add(new Row("closed loop, fixed 128/256, N=128", 128, 256, 0, 128, 16 * 128));
        for (int n : new int[] {2, 4, 16, 32}) {
            // one prompt overflows the budget beside the decodes: each spills into the next one's iterations
            rows.add(new Row("closed loop, fixed 8192/1024 (spills), N=" + n, 8192, 1024, 0, n, Math.max(200, 12 * n)));
        }
        for (int n : new int[] {8, 64, 256}) {
            rows.add(new Row("closed loop, 512/256 +-2%, N=" + n, 512, 256, 0.02, n, Math.max(400, 16 * n)));
        }
        for (int n : new int[] {1, 16, 64, 256, 400}) {
            rows.add(new Row("closed loop, 1024/128 +-50%, N=" + n, 1024, 128, 0.5, n, Math.max(1000, 30 * n)));
        }
        for (int n : new int[] {1, 16, 48, 96}) {
            rows.add(new Row("closed loop, KV-bound 8192/1024 +-50%, N=" + n, 8192, 1024, 0.5, n, Math.max(200, 12 * n)));
        }
        StringBuilder table = new StringBuilder("| scenario | regime | mean TTFT ms pred / sim | mean TPOT ms pred / sim | "
                + "throughput req/s pred / sim | verdict |\n|---|---|---|---|---|---|\n");
        List<String> failed = new ArrayList<>();
        for (Row r : rows) {
            WorkloadSpec spec = WorkloadSpec.builder().datasetName("random").randomInputLen(r.input()).randomOutputLen(r.output())
                    .randomRangeRatio(r.range()).ignoreEos(true).requestRate(Double.POSITIVE_INFINITY)
                    .maxConcurrency(r.clients()).numPrompts(r.requests()).seed(SEED).build();
            long warmups = 3L * r.clients();
            var m = new EnginePrediction(h100, WorkloadMoments.of(Workload.open(spec), 100_000))
                    .closedLoop(r.clients(), warmups, r.requests());
            double[] predicted = {1e3 * m.meanTtftSeconds(), 1e3 * m.meanTpotSeconds(), m.throughputPerS()};
            SimulationResult sim = simulate(h100, spec, warmups);
            double[] simulated = {sim.stats().ttft().meanMs(), sim.stats().tpot().meanMs(),
                    r.clients() / (sim.stats().e2el().meanMs() / 1e3)};
            List<String> failures = new ArrayList<>();
            String[] names = {"mean TTFT", "mean TPOT", "throughput"};
            table.append("| ").append(r.name()).append(" | ").append(m.regime().name().toLowerCase(Locale.ROOT))
                    .append(m.regime() == ClosedLoopBatchingModel.Regime.LOCK_STEP
                            ? ", " + m.lockStepGroups() + " group" + (m.lockStepGroups() > 1 ? "s" : "")
                            : String.format(Locale.ROOT, ", dissolves by round %.0f", m.roundsToDissolve()))
                    .append(" | ");
            for (int i = 0; i < 3; i++) {
                double error = predicted[i] / simulated[i] - 1;
                table.append(String.format(Locale.ROOT, "%.2f / %.2f (%+.1f%%) | ", predicted[i], simulated[i], 100 * error));
                if (!(Math.abs(error) <= 0.10)) {
                    failures.add(String.format(Locale.ROOT, "%s %+.1f%% (limit 10%%)", names[i], 100 * error));
                }
            }
            table.append(failures.isEmpty() ? "pass" : "FAIL: " + String.join(", ", failures)).append(" |\n");
            if (!failures.isEmpty()) {
                failed.add(r.name() + ": " + failures);
            }
        }
        System.out.println(table);
        assertTrue(failed.isEmpty(), String.join("\n", failed));
    }

    @Test
    void predictAgreesWithTheSimulatorAcrossTheScenarioMatrix() {
        List<Outcome> outcomes = new ArrayList<>();
        for (Scenario sc : scenarios()) {
            outcomes.add(run(sc));
        }
        System.out.println(table(outcomes));
        List<String> failed = outcomes.stream()
                .filter(o -> !o.failures().isEmpty() && !KNOWN_MISSES.containsKey(o.scenario().name()))
                .map(o -> o.scenario().name() + ": " + o.failures()).toList();
        assertTrue(failed.isEmpty(), String.join("\n", failed));
    }
}
