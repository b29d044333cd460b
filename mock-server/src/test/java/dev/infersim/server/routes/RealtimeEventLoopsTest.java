package dev.infersim.server.routes;

import dev.infersim.common.ConfigException;
import dev.infersim.server.MockServerExtension;
import dev.infersim.server.TestServers;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.engine.RealtimePriority;
import dev.infersim.server.fleet.MockServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --realtime-event-loops}: where the machine permits it (root or CAP_SYS_NICE, as in CI) every event loop the
 * server reads HTTP on runs under SCHED_FIFO, below the engine thread, and serves as usual; elsewhere the server refuses
 * to start and says why, rather than run without it. Without the flag the loops keep the normal policy.
 */
class RealtimeEventLoopsTest {
    private static final int SCHED_OTHER = 0;
    private static final int SCHED_FIFO = 1;

    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    @Test
    void eventLoopsRunUnderSchedFifoBelowTheEngineOrTheServerSaysWhyNot() throws Exception {
        ServerOptions options = TestServers.options(TestServers.llama8b(8), 10).eventLoops(2).realtimeEventLoops(true).build();
        Set<String> before = eventLoops().keySet();
        MockServer server;
        try {
            server = SERVERS.start(options);
        } catch (ExecutionException refused) {
            ConfigException e = assertInstanceOf(ConfigException.class, refused.getCause());
            assertTrue(e.getMessage().startsWith("--realtime-event-loops: "), e.getMessage());
            assertTrue(e.getMessage().contains("chrt"), e.getMessage());
            return;
        }
        Map<String, String[]> loops = startedEventLoops(before);
        assertEquals(2, loops.size(), "event loops the server started: " + loops.keySet());
        for (String[] stat : loops.values()) {
            assertEquals(SCHED_FIFO, Integer.parseInt(stat[38]), "scheduling policy of an event loop");
            assertEquals(RealtimePriority.EVENT_LOOP_PRIORITY, Integer.parseInt(stat[37]), "real-time priority of an event loop");
        }
        TestServers.Reply reply = TestServers.post(server, "/v1/completions", "{\"prompt\":\"hello\",\"max_tokens\":5}");
        assertEquals(200, reply.status(), reply.raw().body());
    }

    @Test
    void withoutTheFlagTheEventLoopsKeepTheNormalPolicy() throws Exception {
        Set<String> before = eventLoops().keySet();
        SERVERS.start(TestServers.options(TestServers.llama8b(8), 10).eventLoops(2).build());
        Map<String, String[]> loops = startedEventLoops(before);
        assertFalse(loops.isEmpty(), "the server started no event loop");
        for (String[] stat : loops.values()) {
            assertEquals(SCHED_OTHER, Integer.parseInt(stat[38]), "scheduling policy of an event loop");
        }
    }

    /** The event loops the server just started: those not in {@code before}. */
    private static Map<String, String[]> startedEventLoops(Set<String> before) throws IOException {
        Map<String, String[]> now = eventLoops();
        now.keySet().removeAll(before);
        return now;
    }

    /** Vert.x event loops of this JVM by thread id: fields 3 onwards of /proc/self/task/TID/stat (after the name). */
    private static Map<String, String[]> eventLoops() throws IOException {
        Map<String, String[]> threads = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(task.resolve("comm")).startsWith("vert.x-eventloo")) {
                        String stat = Files.readString(task.resolve("stat"));
                        threads.put(task.getFileName().toString(), stat.substring(stat.lastIndexOf(')') + 2).trim().split(" "));
                    }
                } catch (java.nio.file.NoSuchFileException ended) {
                    // the thread ended while we listed
                }
            }
        }
        return threads;
    }
}
