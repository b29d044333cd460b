import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;
import dev.infersim.workload.WorkloadSpec;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * Request-generation throughput of dev.infersim.workload: how many WorkloadRequests per second one thread streams
 * for a million-request run, with and without materialising prompt token ids. Run from the repository root:
 *
 *   mvn -B -o -q install -DskipTests -pl simulator
 *   mvn -B -o -q -pl simulator dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 *   java -Xmx512m -cp "simulator/target/classes:$(cat simulator/target/cp.txt)" bench/workload/WorkloadBench.java
 *
 * Each scenario streams 1,000,000 requests twice to warm up, then five measured times; the table reports the median.
 */
public final class WorkloadBench {

    private static final int REQUESTS = 1_000_000;

    /** Consumes every generated value so the JIT cannot drop the work; printed at the end. */
    private static long sink;

    public static void main(String[] args) {
        run("random 1024/128, Poisson 100 req/s", () -> WorkloadSpec.builder().randomInputLen(1024)
                .randomOutputLen(128).requestRate(100).numPrompts(REQUESTS).build(), false);
        run("random 1024/128 range 0.5, prefix 256, gamma 0.5", () -> WorkloadSpec.builder().randomInputLen(1024)
                .randomOutputLen(128).randomRangeRatio(0.5).randomPrefixLen(256).requestRate(100).burstiness(0.5)
                .numPrompts(REQUESTS).build(), false);
        run("chat profile (log-normal), Poisson 50 req/s", () -> WorkloadSpec.builder().workloadProfile("chat")
                .requestRate(50).numPrompts(REQUESTS).build(), false);
        run("chat-rag-mix profile, closed loop 64", () -> WorkloadSpec.builder().workloadProfile("chat-rag-mix")
                .maxConcurrency(64).numPrompts(REQUESTS).build(), false);
        run("prefix_repetition 10 x 256 + 256, shuffled", () -> WorkloadSpec.builder()
                .datasetName("prefix_repetition").requestRate(100).numPrompts(REQUESTS).build(), false);
        run("chat profile + fill prompt token ids", () -> WorkloadSpec.builder().workloadProfile("chat")
                .requestRate(50).numPrompts(REQUESTS).build(), true);
        System.out.println("(sink " + (sink & 0xff) + ")");
    }

    private static void run(String name, Supplier<WorkloadSpec> spec, boolean fillIds) {
        Workload workload = Workload.open(spec.get());
        int[] buffer = new int[200_000];
        double[] perSecond = new double[5];
        for (int pass = -2; pass < perSecond.length; pass++) {
            long start = System.nanoTime();
            long sum = 0;
            for (WorkloadRequest r : workload) {
                sum += r.promptTokens() + r.outputTokens() + r.arrivalNanos();
                if (fillIds) {
                    r.fillPromptTokenIds(buffer, 128_000);
                    sum += buffer[r.promptTokens() - 1];
                }
            }
            long elapsed = System.nanoTime() - start;
            sink += sum;
            if (pass >= 0) {
                perSecond[pass] = workload.size() * 1e9 / elapsed;
            }
        }
        Arrays.sort(perSecond);
        double median = perSecond[perSecond.length / 2];
        System.out.printf("| %s | %,.0f | %.0f |%n", name, median, 1e9 / median);
    }
}
