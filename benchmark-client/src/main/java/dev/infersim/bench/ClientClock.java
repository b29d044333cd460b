package dev.infersim.bench;

import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The time the benchmark client paces and times out its requests by, in the units of {@link System#nanoTime()}: its
 * reading, the pacer's waits (for an instant, for a {@code --max-concurrency} permit), a task on an event loop at an
 * instant (a send), and a timer (a request's timeout). A run uses {@link #system}; tests give a virtual clock, so the
 * pacing and timeout logic runs in virtual time. Every method is called per request at most: implementations allocate
 * nothing beyond what the wrapped timers do.
 */
interface ClientClock {
    long nanoTime();

    /** Returns once {@link #nanoTime()} has reached {@code deadlineNanos}; the caller's thread waits. */
    void sleepUntil(long deadlineNanos);

    /** Takes a permit, waiting at most {@code timeoutNanos} for one to be released; false when none came. */
    boolean tryAcquire(Semaphore permits, long timeoutNanos) throws InterruptedException;

    /** Runs {@code task} on {@code loop} (an event loop's own timer) at {@code atNanos}. */
    void schedule(EventExecutor loop, long atNanos, Runnable task);

    /** Calls {@code handler} on the calling event loop {@code delayMillis} from now unless cancelled; its id. */
    long setTimer(long delayMillis, Handler<Long> handler);

    void cancelTimer(long id);

    /** {@link System#nanoTime()}, Netty's nanosecond timers and Vert.x's timers, as a run uses them. */
    static ClientClock system(Vertx vertx) {
        return new ClientClock() {
            /** The pacer parks until this long before an instant, then spins: a park wakes late by tens of µs. */
            private static final long SPIN_NANOS = 100_000;

            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void sleepUntil(long deadlineNanos) {
                long remaining;
                while ((remaining = deadlineNanos - System.nanoTime()) > 0) {
                    if (remaining > SPIN_NANOS) {
                        LockSupport.parkNanos(remaining - SPIN_NANOS);
                    } else {
                        Thread.onSpinWait();
                    }
                }
            }

            @Override
            public boolean tryAcquire(Semaphore permits, long timeoutNanos) throws InterruptedException {
                return permits.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS);
            }

            @Override
            public void schedule(EventExecutor loop, long atNanos, Runnable task) {
                loop.schedule(task, atNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
            }

            @Override
            public long setTimer(long delayMillis, Handler<Long> handler) {
                return vertx.setTimer(delayMillis, handler);
            }

            @Override
            public void cancelTimer(long id) {
                vertx.cancelTimer(id);
            }
        };
    }
}
