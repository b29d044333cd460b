import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * Baseline for the send-lag numbers: how late a bare thread wakes up on this machine when it parks until an absolute
 * time and spins the last 100 us (the client's pacing loop with nothing else to do), 1,000 times at 100 Hz.
 * Usage: java bench/benchmark-client/WakeupLatency.java
 */
public class WakeupLatency {
    public static void main(String[] args) {
        int n = 1000;
        long[] lateNanos = new long[n];
        long start = System.nanoTime() + 10_000_000L;
        for (int i = 0; i < n; i++) {
            long target = start + i * 10_000_000L;
            long remaining;
            while ((remaining = target - System.nanoTime()) > 0) {
                if (remaining > 100_000) {
                    LockSupport.parkNanos(remaining - 100_000);
                } else {
                    Thread.onSpinWait();
                }
            }
            lateNanos[i] = System.nanoTime() - target;
        }
        Arrays.sort(lateNanos);
        System.out.printf("wake-up lateness over %d waits: p50 %.3f ms, p99 %.3f ms, max %.3f ms%n", n,
                lateNanos[n / 2] / 1e6, lateNanos[n * 99 / 100] / 1e6, lateNanos[n - 1] / 1e6);
    }
}
