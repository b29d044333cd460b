package dev.infersim.server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replays the hostile-body corpus ({@link HostileCorpus}: the bodies of issue 35 and their kin, the seeds of
 * {@link HostileBodiesFuzzTest}) against in-process servers sharing one event loop ({@link HostileServers}): each is
 * answered 200 or 400 (an OutOfMemoryError or StackOverflowError would be a 500, or no answer), and the loop never
 * works more than {@value HostileServers#STALL_LIMIT_MS} ms of CPU at a stretch, measured in CPU time so that a loaded
 * machine does not fail it ({@link EventLoopStallDetector}). How long the answers take is the wall clock's business:
 * {@link #eachIsAnsweredInTime} is tagged {@code wallclock}.
 */
class HostileBodiesTest {
    private static final com.sun.management.OperatingSystemMXBean PROCESS =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    private static HostileServers servers;

    @BeforeAll
    static void start() throws Exception {
        servers = HostileServers.start();
    }

    @AfterAll
    static void stop() throws Exception {
        servers.close();
        servers = null; // a closed server's engine still holds what it aborted: not for the rest of the module's JVM
    }

    static Stream<Arguments> corpus() {
        return HostileCorpus.entries().stream().map(e -> Arguments.of(e.name(), e));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("corpus")
    void eachIsAnsweredWithoutStallingTheEventLoop(String name, HostileCorpus.Entry e) throws Exception {
        servers.awaitIdle();
        servers.stalls.reset();
        long cpu = PROCESS.getProcessCpuTime();
        HostileCorpus.Answer a = servers.send(e);
        cpu = PROCESS.getProcessCpuTime() - cpu;
        double stall = servers.stalls.longestMs();
        // the CPU the answer cost this JVM (server and client) is what an idle machine's answer time is made of
        System.out.printf(java.util.Locale.ROOT, "%-56s %d head %6.0f ms, whole %6.0f ms, process CPU %5.0f ms, event loop "
                + "%5.1f ms CPU at a stretch: %s%n", name, a.status(), a.ms(), a.wholeMs(), cpu / 1e6, stall,
                a.start().length() > 120 ? a.start().substring(0, 120) : a.start());
        assertTrue(a.status() == 200 || a.status() == 400, a.status() + " " + a.start());
        assertTrue(stall < HostileServers.STALL_LIMIT_MS, "the event loop worked " + stall + " ms of CPU at a stretch");
    }

    @Tag("wallclock") // a deadline on the wall clock
    @ParameterizedTest(name = "{0}")
    @MethodSource("corpus")
    void eachIsAnsweredInTime(String name, HostileCorpus.Entry e) throws Exception {
        servers.awaitIdle();
        servers.send(e); // the first answer of its kind loads classes and compiles
        servers.awaitIdle();
        HostileCorpus.Answer a = servers.send(e);
        assertTrue(a.status() == 200 || a.status() == 400, a.status() + " " + a.start());
        assertTrue(a.ms() < HostileServers.ANSWER_LIMIT_MS, "answered in " + a.ms() + " ms: " + a.start());
    }
}
