package dev.infersim.server.engine;

import dev.infersim.common.ConfigException;
import dev.infersim.server.MockServerExtension;
import dev.infersim.server.TestServers;
import dev.infersim.server.config.ServerOptions;
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
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --realtime-engine}: where the machine permits it (root or CAP_SYS_NICE, as in CI) the engine thread runs under
 * SCHED_FIFO and serves as usual; elsewhere the server refuses to start and says why, rather than run without it.
 */
class RealtimeEngineTest {
    private static final int SCHED_FIFO = 1;
    private MockServer server;

    @RegisterExtension
    static final MockServerExtension SERVERS = MockServerExtension.perTest();

    @Test
    void engineThreadRunsUnderSchedFifoOrTheServerSaysWhyNot() throws Exception {
        ServerOptions options = TestServers.options(TestServers.llama8b(8), 10).realtimeEngine(true).build();
        Set<String> before = engineThreads().keySet();
        try {
            server = SERVERS.start(options);
        } catch (ExecutionException refused) {
            ConfigException e = assertInstanceOf(ConfigException.class, refused.getCause());
            assertTrue(e.getMessage().startsWith("--realtime-engine: "), e.getMessage());
            assertTrue(e.getMessage().contains("chrt"), e.getMessage());
            return;
        }
        String[] stat = startedEngineThread(before);
        assertEquals(SCHED_FIFO, Integer.parseInt(stat[38]), "scheduling policy of the engine thread");
        assertEquals(RealtimePriority.PRIORITY, Integer.parseInt(stat[37]), "real-time priority of the engine thread");
        TestServers.Reply reply = TestServers.post(server, "/v1/completions", "{\"prompt\":\"hello\",\"max_tokens\":5}");
        assertEquals(200, reply.status(), reply.raw().body());
    }

    /** The engine thread the server just started: the one not in {@code before}. */
    private static String[] startedEngineThread(Set<String> before) throws IOException {
        Map<String, String[]> now = engineThreads();
        now.keySet().removeAll(before);
        assertEquals(1, now.size(), "new infersim-engine threads: " + now.keySet());
        return now.values().iterator().next();
    }

    /** Engine threads of this JVM by thread id: fields 3 onwards of /proc/self/task/TID/stat (after the name). */
    private static Map<String, String[]> engineThreads() throws IOException {
        Map<String, String[]> threads = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(task.resolve("comm")).startsWith("infersim-engine")) {
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

    @Test
    void withoutTheFlagTheEngineThreadKeepsTheNormalPolicy() throws Exception {
        Set<String> before = engineThreads().keySet();
        server = SERVERS.start(TestServers.options(TestServers.llama8b(8), 10).build());
        String[] stat = startedEngineThread(before);
        assertEquals(0, Integer.parseInt(stat[38]), "SCHED_OTHER");
    }
}
