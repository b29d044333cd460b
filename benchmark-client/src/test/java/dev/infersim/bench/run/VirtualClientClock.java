package dev.infersim.bench.run;

import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Handler;

import java.util.Comparator;
import java.util.HashSet;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.function.BooleanSupplier;

/**
 * A discrete-event {@link ClientClock} on one thread: time stands still until someone waits, and a wait runs every task
 * due before its end in instant order (ties in the order scheduled), each at its own instant. Waiting for a permit or a
 * condition runs tasks until one of them releases it or makes it hold. Every task runs on the waiting thread, whatever
 * event loop it was meant for; a cancelled timer is dropped without moving time.
 */
final class VirtualClientClock implements ClientClock {
    private record Task(long atNanos, long seq, long id, Runnable run) {
    }

    private final PriorityQueue<Task> tasks = new PriorityQueue<>(
            Comparator.comparingLong(Task::atNanos).thenComparingLong(Task::seq));
    private final Set<Long> cancelled = new HashSet<>();
    private long now;
    /** From 1: an exchange that never set a timer cancels id 0, which must then be nobody's. */
    private long seq = 1;

    VirtualClientClock(long startNanos) {
        this.now = startNanos;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void sleepUntil(long deadlineNanos, long spinNanos) {
        while (nextDueBy(deadlineNanos)) {
            runNext();
        }
        now = Math.max(now, deadlineNanos);
    }

    /** Runs the tasks due until {@code deadlineNanos}: {@link #sleepUntil} without a spin. */
    void advanceTo(long deadlineNanos) {
        sleepUntil(deadlineNanos, 0);
    }

    @Override
    public boolean tryAcquire(Semaphore permits, long timeoutNanos) {
        long deadline = now + timeoutNanos;
        while (!permits.tryAcquire()) {
            if (!nextDueBy(deadline)) {
                now = deadline;
                return false;
            }
            runNext();
        }
        return true;
    }

    /** Without a deadline, a condition that nothing left to run can make hold is a test's deadlock: it throws. */
    @Override
    public boolean awaitCondition(BooleanSupplier done, long deadlineNanos, long pollNanos) {
        while (!done.getAsBoolean()) {
            if (!nextDueBy(deadlineNanos)) {
                if (deadlineNanos == Long.MAX_VALUE) {
                    throw new IllegalStateException("waiting without a deadline for what nothing left to run can do");
                }
                now = Math.max(now, deadlineNanos);
                return false;
            }
            runNext();
        }
        return true;
    }

    @Override
    public void schedule(EventExecutor loop, long atNanos, Runnable task) {
        tasks.add(new Task(atNanos, seq++, -1, task));
    }

    @Override
    public long setTimer(long delayMillis, Handler<Long> handler) {
        long id = seq++;
        tasks.add(new Task(now + delayMillis * 1_000_000L, id, id, () -> handler.handle(id)));
        return id;
    }

    @Override
    public void cancelTimer(long id) {
        cancelled.add(id);
    }

    /** Whether a task (not a cancelled timer) is due at or before {@code deadlineNanos}. */
    private boolean nextDueBy(long deadlineNanos) {
        while (!tasks.isEmpty() && tasks.peek().id() >= 0 && cancelled.remove(tasks.peek().id())) {
            tasks.poll();
        }
        return !tasks.isEmpty() && tasks.peek().atNanos() <= deadlineNanos;
    }

    private void runNext() {
        Task t = tasks.poll();
        now = Math.max(now, t.atNanos());
        t.run().run();
    }
}
