package dev.infersim.server;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.AfterAll;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Coverage-guided fuzzing (Jazzer) of whole requests against running servers, from the hostile-body corpus
 * ({@link HostileCorpus}, its seeds under {@code src/test/resources/dev/infersim/server/HostileBodiesFuzzTestInputs}):
 * an input is a route line and a body (with the corpus' repetitions, so that a mutation can ask for megabytes). Every
 * request is answered with a status below 500, the second time within {@value HostileServers#ANSWER_LIMIT_MS} ms (its
 * head; the first answer of a kind loads classes and compiles), and the event loop never works more than
 * {@value HostileServers#STALL_LIMIT_MS} ms of CPU at a stretch.
 *
 * <p>{@code JAZZER_FUZZ=1} fuzzes for {@code maxDuration} (CI: {@code .ci/run}); {@code mvn verify} leaves it out (tag
 * {@code jazzer}) and replays the seeds in {@link HostileBodiesTest}.
 */
class HostileBodiesFuzzTest {
    private static HostileServers servers;

    private static HostileServers servers() throws Exception {
        if (servers == null) {
            servers = HostileServers.start();
        }
        return servers;
    }

    @AfterAll
    static void stop() throws Exception {
        if (servers != null) {
            servers.close();
        }
    }

    @FuzzTest(maxDuration = "10s")
    void everyBodyIsAnsweredInTimeWithoutStallingAnEventLoop(byte[] input) throws Exception {
        // the requests go to the test's own servers on loopback, which Jazzer's request-forgery detector would report
        BugDetectors.allowNetworkConnections((host, port) -> host.equals("127.0.0.1") || host.equals("localhost"));
        HostileServers s = servers();
        HostileCorpus.Entry e = HostileCorpus.parse("fuzzed", input);
        s.awaitIdle();
        s.stalls.reset();
        s.send(e); // the first answer of its kind loads classes and compiles: the second is timed
        s.awaitIdle();
        HostileCorpus.Answer a = s.send(e);
        assertTrue(a.status() < 500, a.status() + " " + a.start());
        assertTrue(a.ms() < HostileServers.ANSWER_LIMIT_MS, "answered in " + a.ms() + " ms: " + a.start());
        double stall = s.stalls.longestMs();
        assertTrue(stall < HostileServers.STALL_LIMIT_MS, "the event loop worked " + stall + " ms of CPU at a stretch");
    }
}
