package dev.infersim.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ExitCodesTest {

    @Test
    void everyCommandsHelpListsItsExitCodesAndOnlyJudgedRunsHaveThree() {
        List<String> commands = new CommandLine(new Main()).getSubcommands().keySet().stream()
                .filter(c -> !c.equals("help")).toList();
        for (String command : commands) {
            CliRun r = CliRun.of(command, "--help");
            assertEquals(0, r.exitCode(), command);
            String help = r.out();
            // picocli formats descriptions: a lone % ("95% band") makes it warn and print the text unformatted
            assertFalse(r.err().contains("Could not format"), command + ": " + r.err());
            assertTrue(help.contains("Exit codes:"), command + ": " + help);
            for (String code : List.of("0", "1", "2", "130")) {
                assertTrue(help.matches("(?s).*\\n\\s+" + code + "\\s+\\S.*"), command + " lists " + code + ": " + help);
            }
            boolean judged = List.of("bench", "sweep").contains(command);
            assertEquals(judged, help.matches("(?s).*\\n\\s+3\\s+run invalid.*"), command + ": " + help);
            assertEquals(command.equals("merge"), help.matches("(?s).*\\n\\s+3\\s+a shard's run was flagged invalid.*"),
                    command + ": " + help);
        }
        assertTrue(CliRun.of("--help").out().contains("Exit codes:"));
    }

    /** {@code -V} prints the version at the top and under every command, as {@code --help} works everywhere. */
    @Test
    void everyCommandPrintsTheVersion() {
        List<String> commands = new CommandLine(new Main()).getSubcommands().keySet().stream()
                .filter(c -> !c.equals("help")).toList();
        String version = CliRun.of("-V").out().strip();
        assertTrue(version.startsWith("infersim "), version);
        for (String command : commands) {
            CliRun r = CliRun.of(command, "-V");
            assertEquals(0, r.exitCode(), command);
            assertEquals(version, r.out().strip(), command + " -V");
        }
    }
}
