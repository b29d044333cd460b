package dev.infersim.server.engine;

import io.vertx.core.Context;
import io.vertx.core.Handler;

import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Hands one event loop the choices that got tokens in engine steps. The engine thread {@link #add}s choices to an array
 * only it touches, then {@link #schedule} queues that array for the event loop and starts another; at most one task
 * is queued on the loop at a time, and it delivers every array queued by then. So an engine that steps faster than the
 * loop writes (a fast time scale) adds work to the next task instead of a task per step, which had the loop's queue
 * grow without end and its other connections wait behind it. A task delivers at most {@value #ARRAYS_PER_TASK} arrays
 * and then lets the loop's other work go first.
 *
 * <p>Nothing is locked: a lock shared with the event loop let a preempted event loop holding it stall the engine
 * thread, the one thread whose timing matters. Delivered arrays come back through a one-slot exchange, so a steady run
 * allocates little. A choice may be in several queued arrays; delivery is idempotent, so that only costs a check.
 */
public final class EventLoopBatch {
    private static final int ARRAYS_PER_TASK = 64;

    private final Context context;
    private final ConcurrentLinkedQueue<Choice[]> ready = new ConcurrentLinkedQueue<>();
    /** Whether a delivery task is queued on the loop (and has not yet started taking arrays). */
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final Handler<Void> deliverReady = v -> deliverReady();
    private final AtomicReference<Choice[]> spare = new AtomicReference<>();
    /** Engine thread only: the current step's choices (the slots after them null). */
    private Choice[] pending = new Choice[64];
    private int pendingCount;
    /** Engine thread only: added to in the current step, not yet scheduled. */
    boolean touched;

    public EventLoopBatch(Context context) {
        this.context = context;
    }

    /** Engine thread. */
    void add(Choice c) {
        if (pendingCount == pending.length) {
            pending = Arrays.copyOf(pending, pendingCount * 2);
        }
        pending[pendingCount++] = c;
    }

    /** Engine thread: queues this step's choices for the event loop. */
    void schedule() {
        if (pendingCount == 0) {
            return;
        }
        ready.offer(pending);
        Choice[] next = spare.getAndSet(null);
        pending = next != null && next.length >= pendingCount ? next : new Choice[pending.length];
        pendingCount = 0;
        // The loop clears the flag before it takes arrays, so an array queued after that is either taken by this
        // task or finds the flag clear and queues a task of its own.
        if (scheduled.compareAndSet(false, true)) {
            context.runOnContext(deliverReady);
        }
    }

    private void deliverReady() {
        scheduled.set(false);
        for (int i = 0; i < ARRAYS_PER_TASK; i++) {
            Choice[] batch = ready.poll();
            if (batch == null) {
                return;
            }
            deliver(batch);
        }
        if (!ready.isEmpty() && scheduled.compareAndSet(false, true)) {
            context.runOnContext(deliverReady);
        }
    }

    private void deliver(Choice[] batch) {
        for (int i = 0; i < batch.length && batch[i] != null; i++) {
            Choice c = batch[i];
            batch[i] = null;
            c.exchange.deliver(c);
        }
        spare.set(batch);
    }
}
