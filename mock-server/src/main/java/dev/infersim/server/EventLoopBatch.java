package dev.infersim.server;

import io.vertx.core.Context;
import io.vertx.core.Handler;

/**
 * Hands one event loop the choices that got tokens in engine steps, as one task per step instead of one per token.
 * The engine thread {@link #add}s choices and then {@link #schedule}s; the event loop swaps the buffers and delivers.
 * A choice may be queued twice before a flush (two quick steps); delivery is idempotent, so that only costs a check.
 */
final class EventLoopBatch {
    private final Context context;
    private final Handler<Void> flush = v -> flush();
    private Choice[] pending = new Choice[64];
    private int pendingCount;
    private Choice[] draining = new Choice[64];
    private boolean scheduled;
    /** Engine thread only: added to in the current step, not yet scheduled. */
    boolean touched;

    EventLoopBatch(Context context) {
        this.context = context;
    }

    /** Engine thread. */
    synchronized void add(Choice c) {
        if (pendingCount == pending.length) {
            pending = java.util.Arrays.copyOf(pending, pendingCount * 2);
        }
        pending[pendingCount++] = c;
    }

    /** Engine thread: makes sure a flush task is queued on the event loop. */
    void schedule() {
        synchronized (this) {
            if (scheduled || pendingCount == 0) {
                return;
            }
            scheduled = true;
        }
        context.runOnContext(flush);
    }

    private void flush() {
        Choice[] batch;
        int count;
        synchronized (this) {
            batch = pending;
            count = pendingCount;
            pending = draining.length >= batch.length ? draining : new Choice[batch.length];
            pendingCount = 0;
            draining = batch;
            scheduled = false;
        }
        for (int i = 0; i < count; i++) {
            Choice c = batch[i];
            batch[i] = null;
            c.exchange.deliver(c);
        }
    }
}
