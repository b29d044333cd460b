package dev.infersim.bench.run;

import dev.infersim.common.NanoClock;
import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The time the benchmark client paces, times out and drains its requests by, in the units of
 * {@link System#nanoTime()}: its reading and the pacer's wait for an instant ({@link NanoClock}), the pacer's wait for
 * a {@code --max-concurrency} permit, the run's waits on the event loops (the closed loop's end, the drain), a task on
 * an event loop at an instant (a send), and a timer (a request's timeout). A run uses {@link #system}; tests give a
 * virtual clock, so a whole run's pacing, timeout and drain logic runs in virtual time. The per-request methods
 * allocate nothing beyond what the wrapped timers do.
 */
public interface ClientClock extends NanoClock {
    /** How long before a send's instant the client stops parking and spins: a park wakes tens of µs late. */
    long SPIN_NANOS = 100_000;

    /** Takes a permit, waiting at most {@code timeoutNanos} for one to be released; false when none came. */
    boolean tryAcquire(Semaphore permits, long timeoutNanos) throws InterruptedException;

    /**
     * Waits until {@code done} holds or {@code deadlineNanos} has passed, whichever comes first; whether it holds.
     * The system clock checks every {@code pollNanos} (what it waits for happens on other threads); a virtual clock
     * after each task it runs, so the wait ends exactly when the condition starts to hold.
     */
    boolean awaitCondition(BooleanSupplier done, long deadlineNanos, long pollNanos);

    /** Runs {@code task} on {@code loop} (an event loop's own timer) at {@code atNanos}. */
    void schedule(EventExecutor loop, long atNanos, Runnable task);

    /** Calls {@code handler} on the calling event loop {@code delayMillis} from now unless cancelled; its id. */
    long setTimer(long delayMillis, Handler<Long> handler);

    void cancelTimer(long id);

    /** {@link NanoClock#SYSTEM}, Netty's nanosecond timers and Vert.x's timers, as a run uses them. */
    static ClientClock system(Vertx vertx) {
        return new ClientClock() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void sleepUntil(long deadlineNanos, long spinNanos) {
                NanoClock.SYSTEM.sleepUntil(deadlineNanos, spinNanos);
            }

            @Override
            public boolean tryAcquire(Semaphore permits, long timeoutNanos) throws InterruptedException {
                return permits.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS);
            }

            @Override
            public boolean awaitCondition(BooleanSupplier done, long deadlineNanos, long pollNanos) {
                while (!done.getAsBoolean()) {
                    if (System.nanoTime() >= deadlineNanos) {
                        return false;
                    }
                    LockSupport.parkNanos(pollNanos);
                }
                return true;
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
