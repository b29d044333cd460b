package dev.infersim.server;

import java.util.concurrent.locks.LockSupport;

/**
 * The monotonic clock the mock's timing reads, in the units of {@link System#nanoTime()}. The server runs on
 * {@link #SYSTEM}; tests inject a virtual clock so the engine loop's logic runs without waiting on the wall clock.
 */
public interface NanoClock {
    /** {@link System#nanoTime()}, with waits that park and then spin. */
    NanoClock SYSTEM = new NanoClock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        /** Parks until {@code maxSpinNanos} (never more than half the wait) before the deadline, then spins. */
        @Override
        public void sleepUntil(long deadlineNanos, long maxSpinNanos) {
            long spinNanos = Math.min(maxSpinNanos, (deadlineNanos - System.nanoTime()) / 2);
            while (true) {
                long remaining = deadlineNanos - System.nanoTime();
                if (remaining <= 0) {
                    return;
                }
                if (remaining > spinNanos) {
                    LockSupport.parkNanos(remaining - spinNanos);
                } else {
                    Thread.onSpinWait();
                }
            }
        }
    };

    long nanoTime();

    /** Returns once {@link #nanoTime()} has reached {@code deadlineNanos}, spinning at most the last {@code maxSpinNanos}. */
    void sleepUntil(long deadlineNanos, long maxSpinNanos);
}
