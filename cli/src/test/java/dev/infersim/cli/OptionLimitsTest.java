package dev.infersim.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Counts and rates beyond their stated maxima, numbers that are none, and files that are no files end every command at
 * once with one line naming the flag and why, in our words (exit code 2), whichever command declares the flag.
 */
class OptionLimitsTest {
    @TempDir
    Path dir;

    /** One line, naming what it must, in none of Java's or Jackson's words; exit code 2 before anything ran. */
    private static void refused(String contains, String... args) {
        CliRun r = CliRun.of(args);
        String err = r.err().strip();
        assertEquals(2, r.exitCode(), String.join(" ", args) + ": " + r.out() + err);
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.startsWith("infersim: ") && err.contains(contains), String.join(" ", args) + ": " + err);
        for (String javas : new String[] {"For input string", "Overflow", "ALLOW_NON_NUMERIC", "NumberFormatException", "\tat "}) {
            assertFalse(err.contains(javas), err);
        }
        assertFalse(r.out().contains("Serving Benchmark Result"), "nothing ran: " + r.out());
    }

    @Test
    void promptCountsBeyondTheirMaximumEndAtOnce() {
        refused("--num-prompts: 99999999999 is more than 10,000,000, the most it takes", "simulate", "--num-prompts", "99999999999");
        refused("--num-prompts: 2147483647 is more than 10,000,000", "simulate", "--num-prompts", "2147483647");
        refused("--num-prompts: 0 is below 1", "simulate", "--num-prompts", "0");
        refused("--num-prompts", "bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--num-prompts", "99999999999");
        refused("--num-prompts", "predict", "--num-prompts", "99999999999");
        refused("--num-warmups: 99999999999 is more than 10,000,000", "simulate", "--num-warmups", "99999999999");
        refused("--num-prompts': 99999999999999999999 is beyond the numbers it takes", "simulate", "--num-prompts",
                "99999999999999999999");
    }

    @Test
    void ratesBeyondTheirMaximumAreRefusedNotReadAsInf() {
        refused("--request-rate must be at most 1,000,000 (or inf), got 1e308", "simulate", "--request-rate", "1e308");
        refused("--request-rate must be at most 1,000,000 (or inf), got 1e999", "simulate", "--request-rate", "1e999");
        refused("--request-rate must be at most 1,000,000", "predict", "--request-rate", "1e308");
        refused("--request-rates must be at most 1,000,000", "sweep", "--base-url", "http://127.0.0.1:9", "--model", "m",
                "--request-rates", "1,1e308");
        refused("--ramp-up-end-rps: 1.0E308 is more than 1,000,000", "simulate", "--ramp-up-strategy", "linear",
                "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "1e308");
        refused("--max-concurrency: 99999999 is more than 1,000,000", "simulate", "--max-concurrency", "99999999");
        refused("--concurrencies: 5000000 is more than 1,000,000", "sweep", "--base-url", "http://127.0.0.1:9", "--model", "m",
                "--concurrencies", "1,5000000");
    }

    @Test
    void numbersThatAreNoneAreRefusedInOurWords() {
        refused("'NaN' is not a number", "simulate", "--burstiness", "NaN");
        refused("1e999 is beyond the largest number", "simulate", "--burstiness", "1e999");
        refused("'1.5f' is not a number", "serve", "--time-scale", "1.5f");
        refused("99999999999 is beyond the numbers it takes (-2,147,483,648 to 2,147,483,647)", "serve", "--port", "99999999999");
        refused("'1e3' is not a whole number", "simulate", "--random-input-len", "1e3");
        refused("--random-input-len: 99999999 is more than 10,000,000", "simulate", "--random-input-len", "99999999");
    }

    @Test
    void aDeviceIsNoDatasetFile() {
        refused("--dataset-path: /dev/zero is not a regular file (a device or a pipe)", "simulate", "--dataset-name", "trace",
                "--dataset-path", "/dev/zero");
        refused("--dataset-path: trace file " + dir.resolve("none.jsonl") + " does not exist", "simulate", "--dataset-name",
                "trace", "--dataset-path", dir.resolve("none.jsonl").toString());
        refused("--workload: /dev/zero is not a regular file", "simulate", "--workload", "/dev/zero");
    }

    @Test
    void aNanInAJsonInputIsNamedInOurWords() throws Exception {
        Path trace = dir.resolve("nan.jsonl");
        Files.writeString(trace, "{\"timestamp\": NaN, \"input_length\": 10, \"output_length\": 5}\n");
        refused(trace + ":1:18: malformed JSON: 'NaN' is not a JSON number", "simulate", "--dataset-name", "trace",
                "--dataset-path", trace.toString());
        refused("--fake-metrics is not JSON: 'NaN' is not a JSON number", "serve", "--fake-metrics", "{\"running-requests\": NaN}");
    }

    @Test
    void everyBoundedFlagStatesItsMaximumInItsHelp() {
        String simulate = CliRun.of("simulate", "--help").out().replaceAll("\\s+", " ");
        assertTrue(simulate.contains("Requests to send, 1 to 10000000"), simulate);
        assertTrue(simulate.contains("Mean arrival rate, req/s, at most 1000000, or inf"), simulate);
        assertTrue(simulate.contains("Cap on requests in flight, at most 1000000"), simulate);
        String sweep = CliRun.of("sweep", "--help").out().replaceAll("\\s+", " ");
        assertTrue(sweep.contains("(each at most 1000000)"), sweep);
    }

    @Test
    void javasWordsBecomeOurs() {
        assertEquals("--x: '99999999999' is not a number, or not one within range",
                JavaWords.ours("--x: For input string: \"99999999999\""));
        assertEquals("--x: a number out of range", JavaWords.ours("--x: Overflow"));
        assertEquals("a.json: 'NaN' is not a JSON number (line 3, column 9)", JavaWords.ours(
                "a.json: Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow at [Source: (File); line: 3, column: 9]"));
        assertEquals("minimum: 'I' is not a digit of a number",
                JavaWords.ours("minimum: Character I is neither a decimal digit number, decimal point, nor \"e\" notation exponential mark."));
        assertEquals("--port must be 0..65535, got 70000", JavaWords.ours("--port must be 0..65535, got 70000"), "our own words pass");
    }
}
