package dev.infersim.bench.run;

import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.common.ReadLateness;
import dev.infersim.workload.WorkloadRequest;
import io.netty.channel.EventLoop;
import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.internal.ContextInternal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;

/**
 * A lane's loop on Vert.x: an event-loop context, its Netty event loop for nanosecond-precise timers, and the HTTP
 * connections of the lane ({@link LaneConnections}).
 */
final class VertxLaneLoop implements LaneLoop {
    private final ClientClock clock;
    private final ContextInternal context;
    private final EventLoop timers;
    private final LaneConnections connections;
    private final RequestOptions options;
    private final TokenCounter counter;
    /** This loop's read lateness, opened on the loop before its first read. */
    private final ReadLateness reads;
    /** Each request's own x-request-id; null where the user's --header gives every request the same one. */
    private final RequestIds ids;

    private VertxLaneLoop(ClientClock clock, Context loop, LaneConnections connections, RequestOptions options,
                          TokenCounter counter) {
        this.clock = clock;
        this.context = (ContextInternal) loop;
        this.timers = context.nettyEventLoop();
        this.connections = connections;
        this.options = options;
        this.counter = counter;
        this.reads = new ReadLateness(clock::nanoTime, timers);
        timers.execute(() -> reads.open(ReadLateness.ofCurrentThread())); // the accounts are the loop thread's own
        this.ids = options.getHeaders() != null && options.getHeaders().contains(RequestIds.HEADER) ? null : RequestIds.random();
    }

    /** One loop per pair of an event-loop context and the connections used only from it; each on its own thread. */
    static List<LaneLoop> of(ClientClock clock, List<Context> loops, List<LaneConnections> connections,
                             RequestOptions options, TokenCounter counter) {
        List<VertxLaneLoop> lanes = new ArrayList<>();
        for (int i = 0; i < loops.size(); i++) {
            lanes.add(new VertxLaneLoop(clock, loops.get(i), connections.get(i), options, counter));
        }
        // Lanes sharing a loop would share its thread too: the client would silently run on fewer cores.
        if (lanes.stream().map(l -> l.timers).distinct().count() != lanes.size()) {
            throw new IllegalArgumentException("each lane needs its own event loop");
        }
        return List.copyOf(lanes);
    }

    @Override
    public void runAt(long atNanos, Runnable task) {
        clock.schedule(timers, atNanos, () -> context.emit(task, Runnable::run));
    }

    @Override
    public void runAndWait(Runnable action) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        context.runOnContext(v -> {
            try {
                action.run();
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        done.join();
    }

    @Override
    public StreamExchange newExchange(BiConsumer<StreamExchange, RequestOutcome> onFinish) {
        return new StreamExchange(clock, connections, options, counter, reads, ids, onFinish);
    }

    @Override
    public void start(StreamExchange x, WorkloadRequest r, Buffer body, SendSchedule schedule, boolean keepText,
                      long timeoutMillis) {
        x.start(r, body, schedule, keepText, timeoutMillis);
    }

    @Override
    public void release(StreamExchange x) {
        if (x.connection() != null) {
            connections.release(x.connection(), x.httpCompleted());
        }
    }
}
