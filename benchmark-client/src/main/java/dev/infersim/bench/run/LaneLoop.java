package dev.infersim.bench.run;

import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.buffer.Buffer;

import java.util.function.BiConsumer;

/**
 * Where the requests of one {@link LoadRun} lane run: an event loop, its timer, and the connections used only from it,
 * so that a connection, its requests and their callbacks stay on one thread. A run uses {@link VertxLaneLoop}; tests
 * give a loop on a virtual clock whose server answers after a set time, so a whole run can be driven in virtual time.
 */
interface LaneLoop {
    /** Runs {@code task} on this loop at {@code atNanos} on the run's clock (the loop's own timer). */
    void runAt(long atNanos, Runnable task);

    /** Runs {@code action} on this loop and returns once it ran, throwing what it threw; never called from the loop. */
    void runAndWait(Runnable action);

    /**
     * A new exchange on this loop's connections; it calls {@code onFinish} on this loop with itself and the outcome
     * when a request of it ends.
     */
    StreamExchange newExchange(BiConsumer<StreamExchange, RequestOutcome> onFinish);

    /** Sends {@code r} through {@code x} now, on this loop, as {@link StreamExchange#start} does. */
    void start(StreamExchange x, WorkloadRequest r, Buffer body, SendSchedule schedule, boolean keepText,
               long timeoutMillis);

    /** Takes back the connection of {@code x}, whose request has just ended. */
    void release(StreamExchange x);
}
