package dev.infersim.bench.run;

import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.ToLongFunction;

/**
 * A server on a {@link VirtualClientClock}, reached through {@link LaneLoop}s that run every task on the clock: it
 * answers each request {@code serviceNanos} after it went out with one streamed chunk carrying all its output tokens,
 * the usage and {@code data: [DONE]}, read at that instant; a negative service time never answers. It logs each send
 * with the request whose end sent it (a closed loop's user sends its next request from its last one's end callback),
 * and each answer.
 */
final class VirtualServer {
    /** One request out: when, on which lane, and the index of the request whose end sent it (-1 for none). */
    record Send(long index, int lane, long atNanos, long afterIndex) {
    }

    final List<Send> sends = new ArrayList<>();
    /** Request index to the instant its answer was read. */
    final Map<Long, Long> answeredAt = new HashMap<>();
    private final VirtualClientClock clock;
    private final ToLongFunction<WorkloadRequest> serviceNanos;
    private final boolean timeoutsFire;
    /** The request whose end callback runs now, or -1. */
    private long ending = -1;

    /** @param timeoutsFire false to start requests without their timeout timer, as a stalled event loop would */
    VirtualServer(VirtualClientClock clock, ToLongFunction<WorkloadRequest> serviceNanos, boolean timeoutsFire) {
        this.clock = clock;
        this.serviceNanos = serviceNanos;
        this.timeoutsFire = timeoutsFire;
    }

    List<LaneLoop> lanes(int count) {
        List<LaneLoop> lanes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            lanes.add(new Lane(i));
        }
        return lanes;
    }

    private final class Lane implements LaneLoop {
        private final int number;

        Lane(int number) {
            this.number = number;
        }

        @Override
        public void runAt(long atNanos, Runnable task) {
            clock.schedule(null, atNanos, task);
        }

        @Override
        public void runAndWait(Runnable action) {
            action.run();
        }

        @Override
        public StreamExchange newExchange(BiConsumer<StreamExchange, RequestOutcome> onFinish) {
            return new StreamExchange(clock, null, null, null, null, null, (x, outcome) -> {
                long outer = ending;
                ending = outcome.request().index();
                try {
                    onFinish.accept(x, outcome);
                } finally {
                    ending = outer;
                }
            });
        }

        @Override
        public void start(StreamExchange x, WorkloadRequest r, Buffer body, SendSchedule schedule, boolean keepText,
                          long timeoutMillis) {
            long now = clock.nanoTime();
            if (timeoutsFire) {
                x.begin(r, body, schedule, keepText, timeoutMillis);
            } else {
                x.prepare(r, body, schedule, keepText, timeoutMillis);
            }
            x.sentAt(now, -1);
            sends.add(new Send(r.index(), number, now, ending));
            long service = serviceNanos.applyAsLong(r);
            if (service < 0) {
                return;
            }
            long at = now + service;
            clock.schedule(null, at, () -> {
                if (x.awaits(r)) { // else it ended early (timeout, abort) or x moved on
                    answeredAt.put(r.index(), at);
                    x.read(Buffer.buffer(answer(r)), at);
                    x.ended(at);
                }
            });
        }

        @Override
        public void release(StreamExchange x) {
        }
    }

    private static String answer(WorkloadRequest r) {
        int out = r.outputTokens();
        return "data: {\"id\":\"cmpl-" + r.index() + "\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,"
                + "\"text\":\"" + " tok".repeat(out) + "\",\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":"
                + r.promptTokens() + ",\"completion_tokens\":" + out + ",\"total_tokens\":" + (r.promptTokens() + out)
                + "}}\n\ndata: [DONE]\n\n";
    }
}
