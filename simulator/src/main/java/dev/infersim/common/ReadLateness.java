package dev.infersim.common;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;

/**
 * How late one event loop read each message: an upper bound on the time from its bytes reaching the socket to the loop
 * handing them on, built from what the loop itself can observe at each read, not from a periodic probe. The benchmark
 * client bounds its read of each chunk with it (its read delay), the mock server its read of each request's head (the
 * truth log's {@code received_lateness_ms}). A loop reads in batches: it returns from {@code epoll_wait} with the sockets that became
 * readable and reads each in turn, then runs its queued tasks, then waits again. The first read of a batch queues a
 * marker task, which runs once the batch's reads are done; between the marker and the next batch's first read the
 * loop's own accounts say what it did: its time on a CPU ({@code CLOCK_THREAD_CPUTIME_ID}), its time runnable but
 * waiting for one (Linux's {@code run_delay}, {@code /proc/thread-self/schedstat}) and the JVM's collection pauses.
 * <ul>
 *   <li>If those add up to less than the wall time in between (by more than {@value #IDLE_NANOS} ns), the loop slept
 *   in {@code epoll_wait}, which returns at once when a socket is readable: this batch's bytes arrived after it fell
 *   asleep, so no earlier than its first read minus what the loop did and waited for since the marker.</li>
 *   <li>Otherwise the loop never slept: this batch's bytes arrived after the previous batch's {@code epoll_wait}
 *   returned (they would have been read in it), no earlier than the bound of that batch (when it followed a sleep) or
 *   the marker of the batch before it.</li>
 * </ul>
 * A read's lateness is then its instant minus that lower bound of its bytes' arrival: the client's own read delay,
 * per chunk. It covers a loop busy with other connections, a thread preempted or waiting for a CPU, and a collection;
 * it misses only the kernel's microseconds between a packet's arrival and the thread becoming runnable. Where the
 * scheduler's accounts cannot be read (not Linux) the lateness is unknown (-1). One instance per event loop, used on
 * that loop only.
 */
public final class ReadLateness {
    /** Wall time beyond the loop's accounted time that counts as sleep: above the accounts' own reading error. */
    public static final long IDLE_NANOS = 50_000;
    /** A lateness the loop cannot bound. */
    public static final long UNKNOWN = -1;

    /** The loop thread's cumulative accounts, ns; -1 from {@link #runQueueNanos} where unreadable. */
    public interface Accounts {
        long cpuNanos();

        long runQueueNanos();

        /** Collection pauses of the whole JVM so far, rounded up (a collection counts at least 1 ms). */
        long pauseNanos();
    }

    private final LongSupplier clock;
    private final Executor loop;
    private Accounts accounts;
    private final Runnable endOfBatch = this::endOfBatch;
    private boolean open;
    private boolean inBatch;
    /** The earliest instant the current batch's bytes can have arrived. */
    private long dataSince;
    /** The earliest instant the previous batch's epoll_wait can have returned. */
    private long collectedBefore;
    private long lastEnd;
    private long cpuAtEnd;
    private long queueAtEnd;
    private long pausesAtEnd;

    /**
     * @param clock the client's clock (the one each read's instant is taken from)
     * @param loop  runs the marker task after the current batch's reads (the event loop's own task queue)
     */
    public ReadLateness(LongSupplier clock, Executor loop) {
        this.clock = clock;
        this.loop = loop;
    }

    /**
     * On the loop, before its first read: from now on reads are bounded with {@code accounts}, the loop thread's own
     * ({@link #ofCurrentThread}); where they cannot be read, lateness stays unknown.
     */
    public void open(Accounts accounts) {
        if (accounts.runQueueNanos() < 0) {
            return;
        }
        this.accounts = accounts;
        long now = clock.getAsLong();
        endOfBatch();
        collectedBefore = now;
        open = true;
    }

    /** On the loop: the lateness bound of a read at {@code nowNanos}, ns; {@link #UNKNOWN} where it cannot be bounded. */
    public long at(long nowNanos) {
        if (!open) {
            return UNKNOWN;
        }
        if (!inBatch) {
            begin(nowNanos);
        }
        return Math.max(0, nowNanos - dataSince);
    }

    private void begin(long now) {
        inBatch = true;
        long active = Math.max(0, accounts.cpuNanos() - cpuAtEnd) + Math.max(0, accounts.runQueueNanos() - queueAtEnd)
                + Math.max(0, accounts.pauseNanos() - pausesAtEnd);
        long collected;
        if (now - lastEnd - active > IDLE_NANOS) {
            dataSince = now - active; // slept since the marker: woken by these bytes at most `active` ago
            collected = dataSince;
        } else {
            dataSince = collectedBefore; // busy throughout: the bytes came after the previous batch's wait returned
            collected = lastEnd; // this batch's wait began after the previous batch's marker
        }
        collectedBefore = collected;
        loop.execute(endOfBatch);
    }

    private void endOfBatch() {
        inBatch = false;
        lastEnd = clock.getAsLong();
        cpuAtEnd = accounts.cpuNanos();
        queueAtEnd = accounts.runQueueNanos();
        pausesAtEnd = accounts.pauseNanos();
    }

    /** The calling thread's accounts: its CPU clock, its schedstat run-queue time, the JVM's collections. */
    public static Accounts ofCurrentThread() {
        return new ThreadAccounts();
    }

    /** Reads the calling thread's accounts without allocating: one pread of its schedstat, the MXBeans' counters. */
    private static final class ThreadAccounts implements Accounts {
        private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        private final List<GarbageCollectorMXBean> collectors = ManagementFactory.getGarbageCollectorMXBeans();
        private final ByteBuffer buffer = ByteBuffer.allocateDirect(128);
        private FileChannel schedstat;

        ThreadAccounts() {
            try {
                schedstat = FileChannel.open(Path.of("/proc/thread-self").toRealPath().resolve("schedstat"));
            } catch (IOException | RuntimeException unavailable) {
                schedstat = null;
            }
        }

        @Override
        public long cpuNanos() {
            return threads.getCurrentThreadCpuTime();
        }

        /** The second field of {@code /proc/PID/task/TID/schedstat}: ns spent runnable on a run queue. */
        @Override
        public long runQueueNanos() {
            if (schedstat == null) {
                return -1;
            }
            try {
                buffer.clear();
                int n = schedstat.read(buffer, 0);
                long value = 0;
                int field = 0;
                for (int i = 0; i < n; i++) {
                    byte b = buffer.get(i);
                    if (b == ' ') {
                        if (++field == 2) {
                            return value;
                        }
                        value = 0;
                    } else if (b >= '0' && b <= '9') {
                        value = value * 10 + (b - '0');
                    }
                }
                return field == 1 ? value : -1;
            } catch (IOException e) {
                return -1;
            }
        }

        @Override
        public long pauseNanos() {
            long ms = 0;
            for (GarbageCollectorMXBean c : collectors) {
                ms += Math.max(0, c.getCollectionTime()) + Math.max(0, c.getCollectionCount());
            }
            return ms * 1_000_000L;
        }
    }
}
