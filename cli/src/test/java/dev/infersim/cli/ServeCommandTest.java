package dev.infersim.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code infersim serve} rejects bad flags and bad config files with one line naming the culprit (exit 2). */
class ServeCommandTest {

    private static String runFailing(String... args) {
        CliRun run = CliRun.of(args);
        assertEquals(2, run.exitCode(), run.err());
        String text = run.err().trim();
        assertEquals(1, text.lines().count(), text);
        return text;
    }

    @Test
    void badServeFlagsExitWithOneLineNamingTheFlag() {
        assertTrue(runFailing("serve", "--output-mode", "poetry").contains("--output-mode"));
        assertTrue(runFailing("serve", "--failure-rate", "0.5").contains("--failure-types"));
        assertTrue(runFailing("serve", "--failure-types", "meteor").contains("meteor"));
        assertTrue(runFailing("serve", "--output-len-dist", "uniform:9:3").contains("--output-len-dist"));
        assertTrue(runFailing("serve", "--time-scale", "0").contains("--time-scale"));
        assertTrue(runFailing("serve", "--replicas", "0").contains("--replicas"));
        assertTrue(runFailing("serve", "--port", "65535", "--replicas", "2").contains("--replicas"));
        assertTrue(runFailing("serve", "--startup-delay", "soon").contains("--startup-delay"));
        assertTrue(runFailing("serve", "--tool-call-parser", "telepathy").contains("--tool-call-parser"));
        assertTrue(runFailing("serve", "--enable-auto-tool-choice").contains("--enable-auto-tool-choice requires --tool-call-parser"));
        assertTrue(runFailing("serve", "--reasoning-parser", "gut").contains("--reasoning-parser"));
        assertTrue(runFailing("serve", "--reasoning-fraction", "1").contains("--reasoning-fraction"));
        assertTrue(runFailing("serve", "--tool-call-probability", "2").contains("--tool-call-probability"));
        assertTrue(runFailing("serve", "--runner", "draft").contains("--runner"));
        assertTrue(runFailing("serve", "--kv-events-publisher", "kafka").contains("--kv-events-publisher"));
        assertTrue(runFailing("serve", "--kv-events-publisher", "zmq", "--kv-events-endpoint", "localhost").contains("--kv-events-endpoint"));
        assertTrue(runFailing("serve", "--startup-delay", "auto", "--load-bandwidth-gbps", "0").contains("--load-bandwidth-gbps"));
        assertTrue(runFailing("serve", "--kv-events-config", "{\"enable_kv_cache_events\":true,\"buffer_steps\":0}")
                .contains("--kv-events-config buffer_steps"));
        assertTrue(runFailing("serve", "--kv-events-config", "{\"enable_kv_cache_events\":true,\"replay\":\"tcp://*:1\"}")
                .contains("--kv-events-config replay: unknown key"));
        assertTrue(runFailing("serve", "--kv-events-config", "{\"enable_kv_cache_events\":true}", "--kv-events-topic", "t")
                .contains("--kv-events-topic"));
        assertTrue(runFailing("serve", "--enable-lora", "--max-loras", "0").contains("--max-loras"));
        assertTrue(runFailing("serve", "--enable-lora", "--max-lora-rank", "12").contains("--max-lora-rank"));
        assertTrue(runFailing("serve", "--enable-lora", "--max-loras", "4", "--max-cpu-loras", "2").contains("--max-cpu-loras"));
        assertTrue(runFailing("serve", "--lora-modules", "a=/x").contains("--lora-modules"));
        assertTrue(runFailing("serve", "--enable-lora", "--lora-modules", "{\"name\": \"a\"}").contains("--lora-modules"));
        assertTrue(runFailing("serve", "--enable-lora", "--lora-modules", "a=/x", "a=/y").contains("--lora-modules"));
        assertTrue(runFailing("serve", "--api-key", "").contains("--api-key must not be empty"));
        assertTrue(runFailing("serve", "--header-timeout-s", "-1").contains("--header-timeout-s"));
        assertTrue(runFailing("serve", "--grpc-port", "h2").contains("--grpc-port must be a port number or 'http'"));
        assertTrue(runFailing("serve", "--grpc-port", "70000").contains("--grpc-port must be in 0..65535"));
    }

    @Test
    void runtimeLoraUpdatingFollowsVllmsEnvironmentVariable() {
        assertTrue(ServeCommand.runtimeLoraUpdating("1"));
        assertTrue(ServeCommand.runtimeLoraUpdating("True"));
        assertEquals(false, ServeCommand.runtimeLoraUpdating("0"));
        assertEquals(false, ServeCommand.runtimeLoraUpdating(null));
    }

    @Test
    void kvTransferPeersNeedAConnectorAndNoBlankHost() {
        assertTrue(runFailing("serve", "--kv-transfer-peers", "prefill-0").contains("--kv-transfer-peers needs --kv-transfer-config"));
        assertTrue(runFailing("serve", "--kv-transfer-config", "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}",
                "--kv-transfer-peers", "a, ").contains("--kv-transfer-peers"));
    }

    @Test
    void aKvEventEndpointThatCannotBindStopsTheStartWithOneLineNamingIt() throws Exception {
        try (ServerSocket busy = new ServerSocket(0)) {
            String replay = "tcp://*:" + busy.getLocalPort();
            String line = runFailing("serve", "--port", "0", "--max-num-seqs", "4", "--kv-events-config",
                    "{\"enable_kv_cache_events\":true,\"endpoint\":\"tcp://127.0.0.1:1\",\"replay_endpoint\":\"" + replay + "\"}");
            assertTrue(line.contains("cannot bind " + replay), line);
        }
    }

    @Test
    void configFileFlagsAreValidatedLikeCommandLineFlags(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "max-num-seqs: 0\nport: 0\n");
        assertEquals("infersim: --config " + config + ": max-num-seqs: must be >= 1, got 0",
                runFailing("serve", "--config", config.toString()));
        Files.writeString(config, "- not\n- a mapping\n");
        assertTrue(runFailing("serve", "--config", config.toString()).contains("--config"));
    }

    @Test
    void aPortAlreadyInUseIsOneLineNamingThePortNotAStackTrace() throws Exception {
        // Vert.x's native transport reports a busy port as its own IOException, not java.net.BindException.
        try (ServerSocket busy = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String line = runFailing("serve", "--port", Integer.toString(busy.getLocalPort()), "--max-num-seqs", "4");
            assertTrue(line.contains("--port " + busy.getLocalPort()), line);
        }
    }

    @Test
    void anAddressOfNoLocalInterfaceIsOneLineNamingTheHost() {
        // 192.0.2.1 is reserved for documentation, so no machine has it: binding fails with "cannot assign address".
        String line = runFailing("serve", "--host", "192.0.2.1", "--port", "0", "--max-num-seqs", "4");
        assertTrue(line.contains("--host 192.0.2.1"), line);
    }

    @Test
    void aNullValueInTheConfigFileLeavesTheFlagAtItsDefault(@TempDir Path dir) throws Exception {
        // 'api-key: ~' must mean "no key here", not the key "null"; an int flag shows it without starting a server.
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "max-num-seqs: ~\ntime-scale: 0\n");
        String line = runFailing("serve", "--config", config.toString());
        assertTrue(line.contains("--config " + config + ": time-scale: "), line);
    }

    @Test
    void aValueOfTheWrongTypeInTheConfigFileNamesTheFileAndKey(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "port: 0\nmax_num_seqs: lots\n");
        assertEquals("infersim: --config " + config + ": max_num_seqs: 'lots' is not a whole number",
                runFailing("serve", "--config", config.toString()));
    }

    @Test
    void aKeyThatIsNoFlagNamesTheFileAndKey(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "max-num-sequences: 8\n");
        assertEquals("infersim: --config " + config + ": max-num-sequences: no such flag of infersim serve",
                runFailing("serve", "--config", config.toString()));
    }

    @Test
    void aFlagOnTheCommandLineReplacesTheConfigFilesValueSoItsFaultIsTheCommandLines(@TempDir Path dir) throws Exception {
        // The file's bad max-num-seqs is never read; the command line's bad --time-scale is named as the command line's.
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "max-num-seqs: 0\ntime-scale: 2\n");
        String line = runFailing("serve", "--config", config.toString(), "--max-num-seqs", "4", "--time-scale", "0");
        assertTrue(line.startsWith("infersim: --time-scale must be"), line);
    }

    @Test
    void aTruthLogThatCannotBeWrittenNamesItsFlag(@TempDir Path dir) {
        Path missing = dir.resolve("no-such-dir").resolve("truth.jsonl");
        String line = runFailing("serve", "--port", "0", "--truth-log", missing.toString());
        assertTrue(line.startsWith("infersim: --truth-log " + missing + ": cannot write"), line);
    }

    @Test
    void aMissingConfigFileSaysSo() {
        String line = runFailing("serve", "--config", "/nonexistent/serve.yaml");
        assertTrue(line.contains("no such file"), line);
    }

    @Test
    void aNegativeShutdownGraceIsRefused() {
        // With a second bad flag checked later, the test fails fast instead of serving if the grace went unchecked.
        assertTrue(runFailing("serve", "--shutdown-grace-ms", "-5", "--failure-rate", "2").contains("--shutdown-grace-ms"));
    }

    @Test
    void aNegativeFaultDelayNamesItsFlag() {
        assertTrue(runFailing("serve", "--stall-ms", "-1").contains("--stall-ms"));
        assertTrue(runFailing("serve", "--slow-first-token-ms", "-1").contains("--slow-first-token-ms"));
    }

    @Test
    void aWaitingQueueOfZeroIsRefusedAtStart() throws Exception {
        // Every request waits a moment for the engine thread, so a queue of 0 would refuse every request with a 400.
        // The busy port makes the test fail fast rather than serve if 0 went unchecked.
        try (ServerSocket busy = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String line = runFailing("serve", "--max-waiting-requests", "0", "--port", Integer.toString(busy.getLocalPort()));
            assertTrue(line.contains("--max-waiting-requests"), line);
        }
    }
}
