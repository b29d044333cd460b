package dev.infersim.server;

import dev.infersim.common.NanoClock;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A virtual {@link NanoClock}: it stands still until {@link #start}, so everything that arrives before then arrives at
 * the same instant; after that every sleep jumps straight to its deadline, and the engine runs its model-time
 * timeline as fast as the CPU allows.
 */
final class VirtualClock implements NanoClock {
    private final CountDownLatch started = new CountDownLatch(1);
    private final AtomicLong now = new AtomicLong();

    @Override
    public long nanoTime() {
        return now.get();
    }

    @Override
    public void sleepUntil(long deadlineNanos, long spinNanos) {
        try {
            started.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        now.accumulateAndGet(deadlineNanos, Math::max);
    }

    void start() {
        started.countDown();
    }
}
