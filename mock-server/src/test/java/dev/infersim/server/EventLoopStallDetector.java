package dev.infersim.server;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Measures the longest stretch of work an event loop did without coming back to its timers: a task on every event loop
 * every {@value #TICK_MS} ms reads the loop thread's CPU time, and the largest CPU time spent between two ticks is how
 * long the loop's other connections (a probe's request) could have waited on this loop's work. CPU time, not wall time,
 * so a loaded machine that preempts the thread or a GC pause does not count: the measure is the same on a quiet laptop
 * and a busy CI runner, and a test can hold it to 100 ms without flaking.
 */
final class EventLoopStallDetector implements AutoCloseable {
    static final long TICK_MS = 5;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final List<ScheduledFuture<?>> ticks = new ArrayList<>();
    private final AtomicLong longestNanos = new AtomicLong();
    private final AtomicLong tickCount = new AtomicLong();

    EventLoopStallDetector(Vertx vertx) {
        for (EventExecutor loop : ((VertxInternal) vertx).nettyEventLoopGroup()) {
            long[] last = {-1};
            ticks.add(loop.scheduleAtFixedRate(() -> {
                long now = THREADS.getCurrentThreadCpuTime();
                if (last[0] >= 0) {
                    longestNanos.accumulateAndGet(now - last[0], Math::max);
                }
                last[0] = now;
                tickCount.incrementAndGet();
            }, 0, TICK_MS, TimeUnit.MILLISECONDS));
        }
    }

    /**
     * The most CPU time any loop spent between two of its ticks so far, in ms. Waits first for every loop to tick twice
     * more: a stretch of work shows only at the tick that follows it, which may come after the caller saw its answer.
     */
    double longestMs() throws InterruptedException {
        long target = tickCount.get() + 2L * ticks.size();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (tickCount.get() < target && System.nanoTime() < deadline) {
            Thread.sleep(TICK_MS);
        }
        return longestNanos.get() / 1e6;
    }

    long ticks() {
        return tickCount.get();
    }

    /** Starts measuring afresh (after warm-up work: class loading and the JIT's first compilations). */
    void reset() {
        longestNanos.set(0);
    }

    @Override
    public void close() {
        ticks.forEach(t -> t.cancel(false));
    }
}
