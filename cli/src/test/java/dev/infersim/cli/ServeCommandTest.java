package dev.infersim.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    }

    @Test
    void configFileFlagsAreValidatedLikeCommandLineFlags(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "max-num-seqs: 0\nport: 0\n");
        assertTrue(runFailing("serve", "--config", config.toString()).contains("--max-num-seqs"));
        Files.writeString(config, "- not\n- a mapping\n");
        assertTrue(runFailing("serve", "--config", config.toString()).contains("--config"));
    }
}
