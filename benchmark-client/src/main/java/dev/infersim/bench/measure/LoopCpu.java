package dev.infersim.bench.measure;

import io.netty.util.concurrent.EventExecutor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;

/**
 * How long the client's event-loop threads ran on a CPU and how long they waited, runnable, for one, from Linux's
 * per-thread scheduler statistics ({@code /proc/PID/task/TID/schedstat}: time on a CPU, time on a run queue, in
 * nanoseconds). It tells a client too busy to send on time (its loops ran most of the time) from one whose loops had
 * little to do but waited for CPUs that other processes held; the sleeping noise probe cannot, as the scheduler wakes
 * a thread that only sleeps ahead of threads that have been running. Where the statistics cannot be read (not Linux,
 * or a kernel without them) every figure is -1.
 */
public final class LoopCpu {
    private final List<Path> threads;

    private LoopCpu(List<Path> threads) {
        this.threads = threads;
    }

    /** The statistics files of the given event loops' threads, each found from its own thread. */
    public static LoopCpu of(Iterable<EventExecutor> loops) {
        List<Path> threads = new ArrayList<>();
        try {
            for (EventExecutor loop : loops) {
                threads.add(loop.submit(() -> Path.of("/proc/thread-self").toRealPath().resolve("schedstat")).get());
            }
        } catch (ExecutionException unavailable) {
            return new LoopCpu(List.of());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new LoopCpu(List.of());
        }
        return new LoopCpu(threads);
    }

    /** The loops' totals so far: {time on a CPU, time waiting for one}, ns; {-1, -1} when unreadable. */
    public long[] sample() {
        long run = 0;
        long wait = 0;
        try {
            for (Path thread : threads) {
                String[] fields = Files.readString(thread).trim().split(" ");
                run += Long.parseLong(fields[0]);
                wait += Long.parseLong(fields[1]);
            }
        } catch (IOException | RuntimeException unavailable) {
            return new long[] {-1, -1};
        }
        return threads.isEmpty() ? new long[] {-1, -1} : new long[] {run, wait};
    }

    /** {@code end} minus {@code start}, each {-1, -1} when either is unknown. */
    public static long[] between(long[] start, long[] end) {
        if (start[0] < 0 || end[0] < 0) {
            return new long[] {-1, -1};
        }
        return new long[] {end[0] - start[0], end[1] - start[1]};
    }
}
