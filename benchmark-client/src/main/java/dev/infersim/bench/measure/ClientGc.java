package dev.infersim.bench.measure;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The client JVM's own garbage collections over a run, as its collectors' MXBeans count them. A stop-the-world
 * collection holds up every send and every read of the client at once, so a collection inside the measured window
 * is lag the client itself caused (bench/benchmark-client/README.md: G1's young pauses were the largest client-side
 * stalls, and a young generation sized for the run removes them).
 */
public final class ClientGc {
    private final List<GarbageCollectorMXBean> collectors = ManagementFactory.getGarbageCollectorMXBeans();
    private final long[] counts = new long[collectors.size()];
    private final long[] millis = new long[collectors.size()];

    private ClientGc() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = collectors.get(i).getCollectionCount();
            millis[i] = collectors.get(i).getCollectionTime();
        }
    }

    /** Counts from now. */
    public static ClientGc start() {
        return new ClientGc();
    }

    /**
     * Collections since {@link #start}: their number and time in all, and per collector (for G1 its young and old
     * generations; for Shenandoah and ZGC their pauses and their concurrent cycles).
     */
    public Collections since() {
        long total = 0;
        long totalMillis = 0;
        Map<String, Count> byCollector = new LinkedHashMap<>();
        for (int i = 0; i < counts.length; i++) {
            long n = Math.max(0, collectors.get(i).getCollectionCount() - counts[i]);
            long ms = Math.max(0, collectors.get(i).getCollectionTime() - millis[i]);
            total += n;
            totalMillis += ms;
            byCollector.put(collectors.get(i).getName(), new Count(n, ms));
        }
        return new Collections(total, totalMillis, byCollector);
    }

    /** Collections over a run: their number and time in all, and per collector. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Collections(long collections, long timeMs, Map<String, Count> byCollector) {
    }

    /** One collector's collections and their time (ms). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Count(long collections, long timeMs) {
    }
}
