package dev.infersim.bench.measure;

import dev.infersim.result.LatencyStats;

import java.util.concurrent.locks.LockSupport;

/**
 * The machine's own scheduling noise as a thread that does nothing but sleep sees it: it parks for
 * {@value #PERIOD_NANOS} ns at a time and records how late each wake-up comes (the idea of Gil Tene's jHiccup). Its
 * work is negligible, so whatever delays it (other processes on the cores, the OS, the JVM's own pauses) delays the
 * client's sends too, while the client's own busy event loops do not delay it. Measured once before the first run
 * (the calibration) and during every run, so that send lag can be told apart from the machine's noise.
 */
public final class SchedulingNoise {
    static final long PERIOD_NANOS = 1_000_000;

    private final LatencyStats lateness = new LatencyStats();
    private final Thread thread;
    private volatile boolean running = true;

    private SchedulingNoise() {
        thread = new Thread(this::probe, "infersim-noise-probe");
        thread.setDaemon(true);
    }

    /** Starts probing on a new thread. */
    public static SchedulingNoise start() {
        SchedulingNoise noise = new SchedulingNoise();
        noise.thread.start();
        return noise;
    }

    /** Probes for {@code durationNanos} on a new thread while the caller waits, and returns the wake-up lateness. */
    public static LatencyStats calibrate(long durationNanos) {
        SchedulingNoise noise = start();
        long end = System.nanoTime() + durationNanos;
        for (long left = durationNanos; left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
        return noise.stop();
    }

    /** Stops probing and returns the lateness of every wake-up so far. */
    public LatencyStats stop() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return lateness;
    }

    private void probe() {
        while (running) {
            long due = System.nanoTime() + PERIOD_NANOS;
            LockSupport.parkNanos(PERIOD_NANOS);
            long late = System.nanoTime() - due;
            if (running && late >= 0) { // an early return of park is no lateness, and an unpark from stop() neither
                lateness.record(late);
            }
        }
    }
}
