package dev.infersim.common;

import java.util.concurrent.locks.LockSupport;

/**
 * A monotonic clock in the units of {@link System#nanoTime()}, with a wait for an instant. Programs that pace real
 * work run on {@link #SYSTEM}: the mock server's engine steps and the benchmark client's sends; their tests inject a
 * virtual clock, so the timing logic runs without waiting on the wall clock.
 */
public interface NanoClock {
    /**
     * {@link System#nanoTime()}; a wait parks until {@code spinNanos} before its instant, then spins, as a park alone
     * wakes tens to hundreds of microseconds late on Linux.
     */
    NanoClock SYSTEM = new NanoClock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void sleepUntil(long deadlineNanos, long spinNanos) {
            long remaining;
            while ((remaining = deadlineNanos - System.nanoTime()) > 0) {
                if (remaining > spinNanos) {
                    LockSupport.parkNanos(remaining - spinNanos);
                } else {
                    Thread.onSpinWait();
                }
            }
        }
    };

    long nanoTime();

    /** Returns once {@link #nanoTime()} reaches {@code deadlineNanos}, spinning at most the last {@code spinNanos}. */
    void sleepUntil(long deadlineNanos, long spinNanos);
}
