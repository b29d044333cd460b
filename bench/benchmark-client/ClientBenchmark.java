import dev.infersim.bench.BenchConfig;
import dev.infersim.bench.BenchResult;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.ResultJson;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark of the benchmark client against the infersim mock server in the same JVM (bench/benchmark-client/README.md).
 * Scenarios: open-loop (rate, requests), streams (closed loop of N concurrent streams), million (memory over a long run).
 * Usage: java -cp cli/target/infersim.jar bench/benchmark-client/ClientBenchmark.java SCENARIO [args]
 */
public class ClientBenchmark {
    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b"))
                .maxNumSeqs(Integer.parseInt(System.getProperty("maxNumSeqs", "1024"))).build();
        double timeScale = Double.parseDouble(System.getProperty("timeScale", "1"));
        MockServer server = MockServer.start(ServerOptions.builder(d).port(0).timeScale(timeScale)
                .maxWaitingRequests(1_000_000).build()).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        Path detail = Files.createTempFile("infersim-bench-detail", ".jsonl");
        BenchConfig config = new BenchConfig(server.baseUrl(), "/v1/completions", server.options().servedModelName(),
                null, true, 600_000, 1_000_000, 0, GoodputSlo.NONE, List.of("ttft", "tpot", "itl", "e2el"),
                List.of(50.0, 99.0), 10_000, null, 500);
        HeapSampler heap = new HeapSampler();
        heap.start();
        long started = System.nanoTime();
        BenchResult r;
        try (BenchmarkClient client = new BenchmarkClient(config)) {
            r = switch (scenario) {
                case "open-loop" -> client.run(workload(Long.parseLong(args[2]), Double.parseDouble(args[1]), null,
                        Integer.parseInt(args[3]), Integer.parseInt(args[4])), 0, 0, 0, ResultJson.mapper().createObjectNode(), detail);
                case "streams" -> client.run(workload(Long.parseLong(args[2]), Double.POSITIVE_INFINITY,
                        Integer.parseInt(args[1]), Integer.parseInt(args[3]), Integer.parseInt(args[4])), 0, 0, 0,
                        ResultJson.mapper().createObjectNode(), detail);
                case "million" -> client.run(workload(Long.parseLong(args[2]), Double.POSITIVE_INFINITY,
                        Integer.parseInt(args[1]), Integer.parseInt(args[3]), Integer.parseInt(args[4])), 0, 0, 0,
                        ResultJson.mapper().createObjectNode(), detail);
                default -> throw new IllegalArgumentException("scenario: open-loop, streams or million");
            };
        }
        heap.finish();
        r.printSummary(System.out);
        System.out.printf(Locale.ROOT, "wall time %.1f s, max live heap after GC %.1f MB (-Xmx %d MB), detail file %.1f MB%n",
                (System.nanoTime() - started) / 1e9, heap.maxLiveBytes / 1e6, Runtime.getRuntime().maxMemory() >> 20,
                Files.size(detail) / 1e6);
        Files.delete(detail);
        server.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        System.exit(0);
    }

    static Workload workload(long n, double rate, Integer concurrency, int in, int out) {
        var b = WorkloadSpec.builder().numPrompts(n).requestRate(rate).randomInputLen(in).randomOutputLen(out)
                .ignoreEos(true).seed(1);
        if (concurrency != null) {
            b.maxConcurrency(concurrency);
        }
        return Workload.open(b.build());
    }

    /** Largest heap still live right after a collection, sampled every 200 ms. */
    static final class HeapSampler extends Thread {
        volatile boolean running = true;
        volatile long maxLiveBytes;

        HeapSampler() {
            setDaemon(true);
        }

        @Override
        public void run() {
            while (running) {
                long live = 0;
                for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                    if (pool.getType() == MemoryType.HEAP && pool.getCollectionUsage() != null) {
                        live += pool.getCollectionUsage().getUsed();
                    }
                }
                maxLiveBytes = Math.max(maxLiveBytes, live);
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        void finish() {
            running = false;
        }
    }
}
