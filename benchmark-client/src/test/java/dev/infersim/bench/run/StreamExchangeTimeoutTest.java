package dev.infersim.bench.run;

import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A request's timeout, in virtual time: it fires at its instant and ends the request as {@code timeout}. */
class StreamExchangeTimeoutTest {
    private static final long MS = 1_000_000;

    @Test
    void aRequestThatGetsNoResponseEndsAsTimeoutExactlyAtItsTimeout() {
        VirtualClientClock clock = new VirtualClientClock(5_000 * MS);
        List<Long> endedAt = new ArrayList<>();
        List<RequestOutcome> outcomes = new ArrayList<>();
        // No connection can be opened (at most 0), so the request waits for one until its timeout.
        StreamExchange x = new StreamExchange(clock, new LaneConnections(null, null, 0), null, null, null, null,
                (e, outcome) -> {
                    endedAt.add(clock.nanoTime());
                    outcomes.add(outcome);
                });
        WorkloadRequest r = new WorkloadRequest(0, 0, 16, 0, -1, 8, 8, 7, 0, false, "random", null);
        long origin = clock.nanoTime();
        x.start(r, Buffer.buffer("{}"), SendSchedule.unscheduled(origin), false, 2_000);

        clock.advanceTo(origin + 2_000 * MS - 1);
        assertTrue(endedAt.isEmpty(), "still waiting 1 ns before its timeout");
        clock.advanceTo(origin + 60_000 * MS);
        assertEquals(List.of(origin + 2_000 * MS), endedAt, "ended once, at its timeout");
        assertEquals("timeout", outcomes.get(0).errorType());
    }
}
