package dev.infersim.server;

import io.vertx.core.Context;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Hands one event loop the choices that got tokens in an engine step, as one task per step instead of one per token.
 * The engine thread {@link #add}s choices to an array only it touches, then {@link #schedule} passes that array to the
 * event loop inside the task and starts another. Nothing is locked: a lock shared with the event loop let a
 * preempted event loop holding it stall the engine thread, the one thread whose timing matters. Delivered arrays come
 * back through a one-slot exchange, so a steady run allocates none. A choice may be in two queued tasks (two quick
 * steps); delivery is idempotent, so that only costs a check.
 */
final class EventLoopBatch {
    private final Context context;
    private final AtomicReference<Choice[]> spare = new AtomicReference<>();
    /** Engine thread only: the current step's choices. */
    private Choice[] pending = new Choice[64];
    private int pendingCount;
    /** Engine thread only: added to in the current step, not yet scheduled. */
    boolean touched;

    EventLoopBatch(Context context) {
        this.context = context;
    }

    /** Engine thread. */
    void add(Choice c) {
        if (pendingCount == pending.length) {
            pending = Arrays.copyOf(pending, pendingCount * 2);
        }
        pending[pendingCount++] = c;
    }

    /** Engine thread: queues this step's choices on the event loop. */
    void schedule() {
        if (pendingCount == 0) {
            return;
        }
        Choice[] batch = pending;
        int count = pendingCount;
        Choice[] next = spare.getAndSet(null);
        pending = next != null && next.length >= count ? next : new Choice[batch.length];
        pendingCount = 0;
        context.runOnContext(v -> deliver(batch, count));
    }

    private void deliver(Choice[] batch, int count) {
        for (int i = 0; i < count; i++) {
            Choice c = batch[i];
            batch[i] = null;
            c.exchange.deliver(c);
        }
        spare.set(batch);
    }
}
