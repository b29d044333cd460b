package dev.infersim.server.fleet;

import dev.infersim.server.TestServers;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.observe.TruthLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code serve --warmup}: every request of the mix is answered, and nothing of them reaches the real server's truth log. */
class JitWarmupTest {
    @TempDir
    Path dir;

    @Test
    void theMixIsAnsweredByAThrowawayServerAndLeavesTheRealOnesLogEmpty() throws Exception {
        Path file = dir.resolve("truth.jsonl");
        TruthLog log = TruthLog.open(file, TruthLog.DEFAULT_RING_CHARS);
        ServerOptions options = TestServers.options(TestServers.llama8b(8), 1).apiKey("sk-warm").truthLog(log).build();
        try {
            JitWarmup.Result r = JitWarmup.run(options, 48);
            assertEquals(48, r.requests());
            assertEquals(0, r.failed(), "streamed and whole completions and chats, with the key, all answered");
            assertTrue(r.describe().startsWith("infersim warmed up its JIT with 48 internal requests in "), r.describe());
            assertEquals(0, log.written(), "the real server's truth log saw none of them");
        } finally {
            log.close();
        }
        assertEquals(0, Files.size(file));
    }

    @Test
    void theThrowawayServerIsTheRealOnesModelOnAFreeLoopbackPortAtLeastFiftyTimesFaster() {
        ServerOptions real = TestServers.options(TestServers.llama8b(8), 2).host("0.0.0.0").port(8000).build();
        ServerOptions throwaway = JitWarmup.throwaway(real, null);
        assertEquals("127.0.0.1", throwaway.host());
        assertEquals(0, throwaway.port());
        assertEquals(JitWarmup.MIN_TIME_SCALE, throwaway.timeScale());
        assertEquals(real.deployment(), throwaway.deployment());
        assertEquals(real.servedModelNames(), throwaway.servedModelNames());
    }
}
