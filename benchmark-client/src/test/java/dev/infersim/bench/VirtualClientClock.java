package dev.infersim.bench;

import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Handler;

import java.util.Comparator;
import java.util.HashSet;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.Semaphore;

/**
 * A discrete-event {@link ClientClock} on one thread: time stands still until someone waits, and a wait runs every task
 * due before its end in instant order (ties in the order scheduled), each at its own instant. Waiting for a permit runs
 * tasks until one of them releases it. Every task runs on the waiting thread, whatever event loop it was meant for.
 */
final class VirtualClientClock implements ClientClock {
    private record Task(long atNanos, long seq, long id, Runnable run) {
    }

    private final PriorityQueue<Task> tasks = new PriorityQueue<>(
            Comparator.comparingLong(Task::atNanos).thenComparingLong(Task::seq));
    private final Set<Long> cancelled = new HashSet<>();
    private long now;
    private long seq;

    VirtualClientClock(long startNanos) {
        this.now = startNanos;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void sleepUntil(long deadlineNanos) {
        while (!tasks.isEmpty() && tasks.peek().atNanos() <= deadlineNanos) {
            runNext();
        }
        now = Math.max(now, deadlineNanos);
    }

    @Override
    public boolean tryAcquire(Semaphore permits, long timeoutNanos) {
        long deadline = now + timeoutNanos;
        while (!permits.tryAcquire()) {
            if (tasks.isEmpty() || tasks.peek().atNanos() > deadline) {
                now = deadline;
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

    private void runNext() {
        Task t = tasks.poll();
        now = Math.max(now, t.atNanos());
        if (t.id() < 0 || !cancelled.remove(t.id())) {
            t.run().run();
        }
    }
}
