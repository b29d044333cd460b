package dev.infersim.bench.run;

import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.WorkloadRequest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Whole runs, closed and open loop, in virtual time against a {@link VirtualServer} with a set service time: when each
 * request goes out, what the run measures, and when and how the drain ends (last answer, run deadline, interrupt).
 */
class LoadRunTest {
    private static final long MS = 1_000_000;
    private static final long START = 10_000 * MS;
    private static final long SERVICE = 100 * MS;
    private static final long TIMEOUT_MS = 1_000;
    /** The run's deadline comes this long after the last send plus the request timeout. */
    private static final long DEADLINE_GRACE = 5_000 * MS;
    /** Figures computed in doubles from exact virtual instants: equal up to rounding. */
    private static final double EXACT = 1e-9;

    private final VirtualClientClock clock = new VirtualClientClock(0);

    private LoadRun loadRun(VirtualServer server, int lanes) {
        BenchConfig config = new BenchConfig("http://127.0.0.1:1", "/v1/completions", "llama-3.1-8b", null, true,
                TIMEOUT_MS, 1_000_000, 0, GoodputSlo.NONE, List.of("ttft"), List.of(50.0), 1, null, 100);
        return new LoadRun(clock, server.lanes(lanes), PromptRenderer.cl100k(), config);
    }

    private VirtualServer server(ToLongFunction<WorkloadRequest> serviceNanos) {
        return new VirtualServer(clock, serviceNanos, true);
    }

    private static Iterator<WorkloadRequest> arrivingAtMs(long... arrivalsMs) {
        List<WorkloadRequest> requests = new ArrayList<>();
        for (int i = 0; i < arrivalsMs.length; i++) {
            requests.add(new WorkloadRequest(i, arrivalsMs[i] * MS, 16, 0, -1, 8, 8, 7 + i, 0, false, "random", null));
        }
        return requests.iterator();
    }

    /** A closed loop's stream: every arrival at 0. */
    private static Iterator<WorkloadRequest> closedLoop(int n) {
        return arrivingAtMs(new long[n]);
    }

    private static VirtualServer.Send send(VirtualServer server, long index) {
        return server.sends.stream().filter(s -> s.index() == index).findFirst().orElseThrow();
    }

    @Test
    void eachClosedLoopUserSendsItsNextRequestTheInstantItsLastEnds() {
        int users = 3;
        VirtualServer server = server(r -> SERVICE);
        LoadRun.Phase phase = loadRun(server, 2).run(closedLoop(12), true, users, 0, 0, 0, GoodputSlo.NONE, null,
                START);

        assertEquals(12, server.sends.size());
        for (VirtualServer.Send s : server.sends) {
            if (s.afterIndex() < 0) {
                assertEquals(START, s.atNanos(), "request " + s.index() + " is one of the users' first");
            } else {
                VirtualServer.Send previous = send(server, s.afterIndex());
                assertEquals(previous.atNanos() + SERVICE, s.atNanos(), "request " + s.index() + " follows its user's "
                        + "last request by exactly the service time");
                assertEquals(server.answeredAt.get(s.afterIndex()), s.atNanos(),
                        "sent when the last one's answer came");
                assertEquals(previous.lane(), s.lane(), "a user stays on its event loop");
            }
        }
        assertEquals(users, server.sends.stream().filter(s -> s.afterIndex() < 0).count());
        assertEquals(List.of(8L, 4L), List.of(server.sends.stream().filter(s -> s.lane() == 0).count(),
                server.sends.stream().filter(s -> s.lane() == 1).count()), "3 users dealt out to 2 loops: 2 and 1");

        MeasuredWindow window = phase.window();
        assertEquals(users, phase.maxInFlight());
        assertEquals(users, phase.meanInFlight(), EXACT, "every user in flight all the time");
        assertEquals(SERVICE / 1e6, window.stats().e2el().meanMs(), EXACT);
        double usersPerServiceTime = users / (SERVICE / 1e9);
        assertEquals(usersPerServiceTime, window.closedLoopThroughput(phase.meanInFlight()), EXACT);
        assertEquals(usersPerServiceTime, window.finished() / (window.durationNanos() / 1e9), EXACT,
                "completions over the window agree: 12 requests in 4 service times");
        assertEquals(START + 4 * SERVICE, clock.nanoTime(), "the drain ends at the last answer");
        assertFalse(phase.interrupted());
    }

    @Test
    void closedLoopWarmupAndDurationBoundTheMeasuredWindow() {
        VirtualServer server = server(r -> SERVICE);
        // warmup: the first 5 requests and those sent within 150 ms; then 250 ms of measured sends
        LoadRun.Phase phase = loadRun(server, 1).run(closedLoop(20), true, 2, 5, 150 * MS, 250 * MS,
                GoodputSlo.NONE, null, START);

        assertEquals(START + 200 * MS, phase.window().startNanos(),
                "request 4 at 200 ms is warmup by count, request 5 beside it opens the window");
        assertEquals(5, phase.warmup().finished());
        assertEquals(5, phase.window().finished(), "requests 5 to 9; at 500 ms the 250 ms are over");
        assertEquals(10, server.sends.size());
        assertEquals(START + 500 * MS, clock.nanoTime(), "nothing sent at 500 ms: the drain ends there");
    }

    @Test
    void aRequestTimeoutEndsItAtItsInstantAndItsUserGoesOnFromThere() {
        VirtualServer server = server(r -> r.index() == 1 ? -1 : SERVICE);
        LoadRun.Phase phase = loadRun(server, 1).run(closedLoop(4), true, 1, 0, 0, 0, GoodputSlo.NONE, null, START);

        long timedOut = START + SERVICE + TIMEOUT_MS * MS;
        assertEquals(timedOut, send(server, 2).atNanos(), "request 2 goes out when request 1 timed out");
        assertEquals(1, send(server, 2).afterIndex());
        assertEquals(Map.of("timeout", 1L), phase.window().errors().counts());
        assertEquals(3, phase.window().stats().completed());
        assertEquals(timedOut + 2 * SERVICE, clock.nanoTime());
    }

    @Test
    void whatOutlivesTheRunsDeadlineIsAbortedThereAsDeadline() {
        // the timeouts never fire, as on a stalled event loop: the run's deadline is then what ends request 3
        VirtualServer server = new VirtualServer(clock, r -> r.index() == 3 ? -1 : SERVICE, false);
        LoadRun.Phase phase = loadRun(server, 1).run(closedLoop(4), true, 2, 0, 0, 0, GoodputSlo.NONE, null, START);

        long lastSendEnded = START + 2 * SERVICE; // request 2's end found the stream exhausted
        assertEquals(lastSendEnded + TIMEOUT_MS * MS + DEADLINE_GRACE, clock.nanoTime());
        assertEquals(Map.of("deadline", 1L), phase.window().errors().counts());
        assertEquals(3, phase.window().stats().completed());
        assertEquals(0, phase.window().cancelled());
        assertFalse(phase.interrupted());
    }

    @Test
    void anInterruptedClosedLoopSendsNoMoreAndCancelsWhatIsInFlightAtOnce() {
        VirtualServer server = server(r -> SERVICE);
        LoadRun load = loadRun(server, 1);
        clock.schedule(null, START + 250 * MS, load::stop);
        LoadRun.Phase phase = load.run(closedLoop(100), true, 2, 0, 0, 0, GoodputSlo.NONE, null, START);

        assertTrue(phase.interrupted());
        assertEquals(START + 250 * MS, clock.nanoTime(), "stopped at the interrupt, not at the next answer");
        assertEquals(6, server.sends.size());
        assertEquals(4, phase.window().stats().completed());
        assertEquals(2, phase.window().cancelled(), "the two in flight: cancelled, not failed");
        assertEquals(0, phase.window().stats().failed());
    }

    @Test
    void openLoopSendsOnScheduleAndDrainsToTheLastAnswer() {
        VirtualServer server = server(r -> 250 * MS);
        LoadRun.Phase phase = loadRun(server, 2).run(arrivingAtMs(0, 100, 200, 300, 400), false, 0, 0, 0, 0,
                GoodputSlo.NONE, null, START);

        for (VirtualServer.Send s : server.sends) {
            assertEquals(START + s.index() * 100 * MS, s.atNanos(), "request " + s.index() + " on schedule");
            assertEquals(s.index() % 2, s.lane(), "sends go to the lanes in turn");
        }
        MeasuredWindow window = phase.window();
        assertEquals(0, window.sendLag().maxMs());
        assertEquals(3, phase.maxInFlight());
        // in flight while sending (0-400 ms): 1, 2, 3, 2, 3, 2 over 100, 100, 50, 50, 50, 50 ms: 800 / 400
        assertEquals(2.0, phase.meanInFlight(), EXACT);
        assertEquals(5, window.stats().completed());
        assertEquals(650 * MS, window.durationNanos());
        assertEquals(START + 650 * MS, clock.nanoTime(), "the drain ends at the last answer");
    }

    @Test
    void openLoopWithACapSendsEachQueuedRequestWhenASlotFrees() {
        VirtualServer server = server(r -> SERVICE);
        LoadRun.Phase phase = loadRun(server, 1).run(arrivingAtMs(0, 0, 0), false, 1, 0, 0, 0, GoodputSlo.NONE,
                null, START);

        assertEquals(List.of(START, START + SERVICE, START + 2 * SERVICE),
                server.sends.stream().map(VirtualServer.Send::atNanos).toList());
        assertEquals(2, phase.window().clientQueued());
        assertEquals(1, phase.maxInFlight());
        assertEquals(SERVICE / 1e6, phase.window().stats().e2el().meanMs(), EXACT, "latencies count from the slot");
        assertEquals(START + 3 * SERVICE, clock.nanoTime());
    }

    @Test
    void anInterruptedOpenLoopCancelsWhatIsInFlightAndDropsWhatIsNotDueYet() {
        VirtualServer server = server(r -> 250 * MS);
        LoadRun load = loadRun(server, 1);
        clock.schedule(null, START + 25 * MS, load::stop);
        LoadRun.Phase phase = load.run(arrivingAtMs(0, 10, 20, 30, 40, 50, 60, 70, 80, 90), false, 0, 0, 0, 0,
                GoodputSlo.NONE, null, START);

        assertTrue(phase.interrupted());
        assertEquals(List.of(0L, 1L, 2L), server.sends.stream().map(VirtualServer.Send::index).toList());
        assertEquals(3, phase.window().cancelled());
        assertEquals(0, phase.window().finished());
        assertNotEquals(START + 250 * MS, clock.nanoTime(), "no answer is waited for");
        assertEquals(START + 80 * MS, clock.nanoTime(),
                "the run ends once the last request handed to a lane (request 8, at 30 ms) is due and dropped");
    }
}
