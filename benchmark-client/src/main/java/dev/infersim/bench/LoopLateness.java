package dev.infersim.bench;

import dev.infersim.result.LatencyStats;
import io.netty.util.concurrent.EventExecutor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How late the client's own event loops run work that is due: each loop runs a task every {@value #PERIOD_NANOS} ns
 * and records how long after its due time it ran. A response chunk that reaches the socket waits for its loop just as
 * the task does (for the thread to get a CPU, and for the reads and sends already under way on it), so this is the
 * client's read delay: how much later than the bytes arrived a chunk's time is taken. Send lag measures the same wait
 * for sends, but only against a schedule; this probe runs in every load mode. Each loop records into its own
 * statistics, read once the probe has stopped on that loop.
 */
final class LoopLateness {
    static final long PERIOD_NANOS = 10_000_000;

    private final List<Probe> probes = new ArrayList<>();

    private LoopLateness() {
    }

    /** Starts probing on every loop of {@code loops}. */
    static LoopLateness start(Iterable<EventExecutor> loops) {
        LoopLateness lateness = new LoopLateness();
        for (EventExecutor loop : loops) {
            Probe probe = new Probe(loop);
            lateness.probes.add(probe);
            loop.execute(probe::begin);
        }
        return lateness;
    }

    /** Stops every loop's probe and returns the lateness of all their runs. */
    LatencyStats stop() {
        LatencyStats all = new LatencyStats();
        for (Probe probe : probes) {
            all.add(probe.stop().join());
        }
        return all;
    }

    /** One loop's probe; its state belongs to that loop. */
    private static final class Probe implements Runnable {
        private final EventExecutor loop;
        private final LatencyStats lateness = new LatencyStats();
        private long due;
        private boolean stopped;

        Probe(EventExecutor loop) {
            this.loop = loop;
        }

        void begin() {
            due = System.nanoTime() + PERIOD_NANOS;
            loop.schedule(this, PERIOD_NANOS, TimeUnit.NANOSECONDS);
        }

        @Override
        public void run() {
            if (stopped) {
                return;
            }
            lateness.record(Math.max(0, System.nanoTime() - due));
            // the next due time follows this run, so one long stall counts once rather than as a burst of late runs
            due = System.nanoTime() + PERIOD_NANOS;
            loop.schedule(this, PERIOD_NANOS, TimeUnit.NANOSECONDS);
        }

        CompletableFuture<LatencyStats> stop() {
            CompletableFuture<LatencyStats> done = new CompletableFuture<>();
            loop.execute(() -> {
                stopped = true;
                done.complete(lateness);
            });
            return done;
        }
    }
}
