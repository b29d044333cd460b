// The grid behind the vllm-v0 host time (README.md, "Engine versions"): each candidate HostTime replayed over the
// 7 CI latency points and the v0.6.0 update's held points, with the engine model's V1 scheduler and the bundled
// profiles, exactly as PublishedVllmPointsTest replays them (seed 0). About a minute on 2 cores:
//
//   ./infersim --version >/dev/null   # builds cli/target/infersim.jar
//   jshell --class-path cli/target/infersim.jar bench/fidelity/fit-v0.jsh
import dev.infersim.engine.*;
import dev.infersim.sim.*;
import dev.infersim.workload.*;

double[] replay(String gpu, String model, int tp, boolean v060, int in, int out, int n, double rate, HostTime host) {
    var b = Deployment.builder(Profiles.gpu(gpu), Profiles.model(model)).tensorParallelSize(tp);
    if (v060) {
        b = b.enableChunkedPrefill(false).enablePrefixCaching(false).maxModelLen(8192).maxNumBatchedTokens(8192);
    }
    var d = b.build(); // vllm-v1, whose steps are the GPU's: the candidate host time is laid over them here
    var engine = new EngineCore(d, KvCapacity.of(d), host.over(new RooflineCostModel(d)), SchedulingPolicies.byName("fcfs"));
    var spec = WorkloadSpec.builder().datasetName("random").randomInputLen(in).randomOutputLen(out).ignoreEos(true)
            .requestRate(rate).numPrompts(n).seed(0).build();
    var r = new Simulation(new Replica[] {new Replica(0, engine)}, new RoundRobinRouter(), SimulationOptions.defaults(), null)
            .run(Workload.open(spec));
    return new double[] {r.stats().e2el().meanMs(), r.stats().completed() * 1e9 / r.durationNanos(), r.stats().tpot().meanMs()};
}

String[][] ci = {{"h200", "llama-3.1-8b", "1", "833.421"}, {"h200", "llama-3.1-70b", "4", "2077.53"},
        {"h200", "mixtral-8x7b", "2", "1917.44"}, {"h100", "llama-3.1-8b", "1", "997.542"},
        {"h100", "llama-3.1-70b", "4", "2444.47"}, {"h100", "mixtral-8x7b", "2", "2326.97"},
        {"a100-80g", "llama-3.1-8b", "1", "1585.43"}};
// model, TP, output tokens, published throughput at QPS inf, published TPOT at QPS 2 (NaN: a known miss, not fitted)
String[][] v060 = {{"llama-3.1-8b", "1", "256", "31.05", "8.09"}, {"llama-3.1-8b", "1", "16", "59.10", "NaN"},
        {"llama-3.1-70b", "4", "256", "15.41", "21.70"}, {"llama-3.1-70b", "4", "16", "25.27", "NaN"}};

void evaluate(HostTime host) {
    StringBuilder line = new StringBuilder(String.format("%.0f us a step, %.0f us a new request | CI", host.fixedUs(), host.perRequestUs()));
    double largest = 0;
    for (String[] p : ci) {
        double e = 100 * (replay(p[0], p[1], Integer.parseInt(p[2]), false, 32, 128, 8, Double.POSITIVE_INFINITY, host)[0]
                / Double.parseDouble(p[3]) - 1);
        largest = Math.max(largest, Math.abs(e));
        line.append(String.format(" %+.1f", e));
    }
    line.append(" | v0.6.0");
    for (String[] p : v060) {
        int tp = Integer.parseInt(p[1]);
        int out = Integer.parseInt(p[2]);
        double e = 100 * (replay("h100", p[0], tp, true, 462, out, 500, Double.POSITIVE_INFINITY, host)[1] / Double.parseDouble(p[3]) - 1);
        largest = Math.max(largest, Math.abs(e));
        line.append(String.format(" %+.1f", e));
        if (!p[4].equals("NaN")) {
            double t = 100 * (replay("h100", p[0], tp, true, 462, out, 500, 2, host)[2] / Double.parseDouble(p[4]) - 1);
            largest = Math.max(largest, Math.abs(t));
            line.append(String.format(" %+.1f", t));
        }
    }
    System.out.println(line.append(String.format(" | largest %.1f", largest)));
}

for (double[] p : new double[][] {{1300, 5000}, {1400, 6000}, {1400, 7000}, {1500, 6500}, {1500, 7000}, {1600, 6500}}) {
    evaluate(new HostTime(p[0], p[1], false));
}
/exit
