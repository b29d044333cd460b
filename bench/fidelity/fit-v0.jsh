// The grid behind the vllm-v0 host time (README.md, "Engine versions"): each candidate HostTime replayed over the
// 7 CI latency points (one step a schedule) and the v0.6.0 update's 8 points (--num-scheduler-steps 10), with the
// engine model's scheduler and the bundled profiles, exactly as PublishedVllmPointsTest replays them (seed 0). About
// 10-20 s a candidate on 2 cores:
//
//   ./infersim --version >/dev/null   # builds cli/target/infersim.jar
//   GRID="600,800,6000;1400,0,7000" jshell --class-path cli/target/infersim.jar bench/fidelity/fit-v0.jsh
//
// GRID: the candidates, "schedule,pass,request" in microseconds, separated by ';' (default: the fit, then the earlier
// one of 1.4 ms a step and 7.0 ms a request).
import dev.infersim.engine.*;
import dev.infersim.sim.*;
import dev.infersim.workload.*;

double[] replay(String gpu, String model, int tp, boolean v060, int in, int out, int n, double rate, HostTime host) {
    var b = Deployment.builder(Profiles.gpu(gpu), Profiles.model(model)).tensorParallelSize(tp).engine(EngineVersion.VLLM_V0);
    if (v060) {
        b = b.enableChunkedPrefill(false).enablePrefixCaching(false).maxModelLen(8192).maxNumBatchedTokens(8192)
                .numSchedulerSteps(10);
    }
    var d = b.build();
    var engine = new EngineCore(d, KvCapacity.of(d), new RooflineCostModel(d), host, SchedulingPolicies.byName("fcfs"));
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
// model, TP, output tokens, published throughput at QPS inf, published TPOT at QPS 2
String[][] v060 = {{"llama-3.1-8b", "1", "256", "31.05", "8.09"}, {"llama-3.1-8b", "1", "16", "59.10", "9.65"},
        {"llama-3.1-70b", "4", "256", "15.41", "21.70"}, {"llama-3.1-70b", "4", "16", "25.27", "24.07"}};

void evaluate(HostTime host) {
    StringBuilder line = new StringBuilder(String.format("%.0f us a schedule, %.0f us a pass, %.0f us a new request | CI",
            host.fixedUs(), host.perPassUs(), host.perRequestUs()));
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
        double t = 100 * (replay("h100", p[0], tp, true, 462, out, 500, 2, host)[2] / Double.parseDouble(p[4]) - 1);
        largest = Math.max(largest, Math.abs(t));
        line.append(String.format(" %+.1f", t));
    }
    System.out.println(line.append(String.format(" | largest %.1f", largest)));
}

String spec = System.getenv().getOrDefault("GRID", "600,800,6000;1400,0,7000");
for (String c : spec.split(";")) {
    String[] v = c.split(",");
    evaluate(new HostTime(Double.parseDouble(v[0]), Double.parseDouble(v[1]), Double.parseDouble(v[2]), false));
}
/exit
