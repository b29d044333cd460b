package dev.infersim.bench.measure;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.VertxInternal;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class LoopCpuTest {
    private static final long MS = 1_000_000;

    /** 50 ms of CPU spent on the event loop (by the JVM's own count of the thread's CPU time) shows as time on a CPU. */
    @Test
    void countsTheCpuTimeOfTheEventLoopThreads() throws Exception {
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        try {
            LoopCpu cpu = LoopCpu.of(((VertxInternal) vertx).nettyEventLoopGroup());
            long[] start = cpu.sample();
            assumeTrue(start[0] >= 0, "no per-thread scheduler statistics on this system (/proc/PID/task/TID/schedstat)");
            ((VertxInternal) vertx).nettyEventLoopGroup().next().submit(() -> {
                ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                long until = threads.getCurrentThreadCpuTime() + 50 * MS;
                while (threads.getCurrentThreadCpuTime() < until) {
                    Thread.onSpinWait();
                }
            }).get();
            long[] used = LoopCpu.between(start, cpu.sample());
            assertTrue(used[0] >= 45 * MS, "on a CPU: " + used[0] / 1e6 + " ms");
            assertTrue(used[1] >= 0, "waiting: " + used[1] / 1e6 + " ms");
        } finally {
            vertx.close().await();
        }
    }

    @Test
    void aDifferenceWithAnUnknownSampleIsUnknown() {
        assertEquals(-1, LoopCpu.between(new long[] {-1, -1}, new long[] {5, 5})[0]);
        assertEquals(-1, LoopCpu.between(new long[] {5, 5}, new long[] {-1, -1})[1]);
    }
}
