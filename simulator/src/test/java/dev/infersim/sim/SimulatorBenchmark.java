package dev.infersim.sim;

import dev.infersim.result.RequestLogWriter;
import dev.infersim.result.ServingStats;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import dev.infersim.workload.WorkloadSpecBuilder;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Speed and memory harness for the simulator (bench/simulator/README.md): finds the deployment's capacity for a workload
 * profile from a burst (all requests at once: the completion rate of a saturated engine is its capacity), then
 * simulates N requests of the profile at a fraction of that rate with per-request detail streamed to disk, and reports
 * wall time, process CPU time, simulated requests per core-second and peak heap.
 *
 * <pre>java -Xmx2g -cp ... dev.infersim.sim.SimulatorBenchmark [profile] [requests] [load fraction] [detail.jsonl]</pre>
 */
public final class SimulatorBenchmark {
    private static final int CAPACITY_PROBE_REQUESTS = 20_000;

    private SimulatorBenchmark() {
    }

    /** The completion rate of the engine saturated by a burst of the profile's requests, all sent at t = 0. */
    static double capacity(Deployment deployment, String profile) throws java.io.IOException {
        SimulationResult probe = simulate(deployment, spec(profile, CAPACITY_PROBE_REQUESTS, Double.POSITIVE_INFINITY), null);
        return probe.stats().completed() / (probe.durationNanos() / 1e9);
    }

    public static void main(String[] args) throws Exception {
        String profile = args.length > 0 ? args[0] : "chat";
        long requests = args.length > 1 ? Long.parseLong(args[1]) : 1_000_000;
        double loadFraction = args.length > 2 ? Double.parseDouble(args[2]) : 0.8;
        Path detail = args.length > 3 ? Path.of(args[3]) : Files.createTempFile("infersim-bench", ".jsonl");
        Deployment deployment = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();

        double capacity = capacity(deployment, profile);
        double rate = Math.round(capacity * loadFraction * 10) / 10.0;
        System.out.printf(Locale.ROOT, "capacity (%d-request burst): %.2f req/s; running %d requests at %.1f req/s (%.0f%%)%n",
                CAPACITY_PROBE_REQUESTS, capacity, requests, rate, loadFraction * 100);

        long cpuBefore = processCpuNanos();
        long wallBefore = System.nanoTime();
        SimulationResult result;
        try (RequestLogWriter writer = new RequestLogWriter(detail, false)) {
            result = simulate(deployment, spec(profile, requests, rate), writer);
        }
        double wallS = (System.nanoTime() - wallBefore) / 1e9;
        double cpuS = (processCpuNanos() - cpuBefore) / 1e9;
        ServingStats s = result.stats();
        System.out.printf(Locale.ROOT, "simulated: %d requests, %d output tokens, %d engine steps, %.0f s of virtual time, saturated=%s%n",
                s.completed(), s.outputTokens(), result.simulatorKeys().engineSteps(),
                result.durationNanos() / 1e9, result.saturation().saturated());
        System.out.printf(Locale.ROOT, "latency: mean TTFT %.1f ms, p99 TTFT %.1f ms, mean TPOT %.2f ms, p99 ITL %.2f ms%n",
                s.ttft().meanMs(), s.ttft().percentileMs(99), s.tpot().meanMs(), s.itl().percentileMs(99));
        System.out.printf(Locale.ROOT, "wall %.2f s, process CPU %.2f s, %.0f simulated requests per core-second, "
                        + "%.0f per wall second; peak heap %.0f MB of max %.0f MB; detail %s (%.0f MB)%n",
                wallS, cpuS, requests / cpuS, requests / wallS, peakHeapBytes() / 1e6,
                Runtime.getRuntime().maxMemory() / 1e6, detail, Files.size(detail) / 1e6);
    }

    private static WorkloadSpec spec(String profile, long requests, double rate) {
        WorkloadSpecBuilder b = WorkloadSpec.builder().workloadProfile(profile).numPrompts(requests).seed(1)
                .requestRate(rate);
        return b.build();
    }

    private static SimulationResult simulate(Deployment deployment, WorkloadSpec spec, RequestLogWriter detail) {
        return Simulation.single(EngineCore.create(deployment), SimulationOptions.defaults(), detail)
                .run(Workload.open(spec));
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static long peakHeapBytes() {
        List<MemoryPoolMXBean> pools = ManagementFactory.getMemoryPoolMXBeans();
        long peak = 0;
        for (MemoryPoolMXBean pool : pools) {
            if (pool.getType() == MemoryType.HEAP) {
                peak += pool.getPeakUsage().getUsed();
            }
        }
        return peak;
    }
}
