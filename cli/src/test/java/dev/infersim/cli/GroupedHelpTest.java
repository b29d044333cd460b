package dev.infersim.cli;

import dev.infersim.cli.options.OptionGroup;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The long commands' {@code --help} lists every option once, under the heading of its group, none left ungrouped. */
class GroupedHelpTest {

    @ParameterizedTest
    @ValueSource(strings = {"serve", "simulate", "bench", "sweep", "predict", "autoscale"})
    void everyOptionIsListedOnceUnderItsGroupsHeading(String command) {
        CliRun run = CliRun.of(command, "--help");
        assertEquals(0, run.exitCode(), run.err());
        String help = run.out();
        assertFalse(help.contains("\nOther options:"), command + " has ungrouped options:\n" + help);
        List<String> headings = new ArrayList<>();
        for (OptionGroup g : OptionGroup.values()) {
            int at = help.indexOf("\n" + g.heading + ":\n");
            if (at >= 0) {
                headings.add(g.heading);
                assertEquals(at, help.lastIndexOf("\n" + g.heading + ":\n"), g.heading + " twice");
            }
        }
        assertTrue(headings.size() >= 3, command + ": " + headings);
        // each heading in the enum's order, then picocli's help options last
        int last = -1;
        for (String h : headings) {
            int at = help.indexOf("\n" + h + ":\n");
            assertTrue(at > last, h + " out of order in " + command);
            last = at;
        }
        assertTrue(help.indexOf("\nHelp:\n") > last, command);
        assertTrue(help.contains("--help"), command);
    }

    @ParameterizedTest
    @ValueSource(strings = {"serve", "simulate"})
    void theBigCommandsOfferAConfigFileFirst(String command) {
        String help = CliRun.of(command, "--help").out();
        int config = help.indexOf("\n" + OptionGroup.CONFIG.heading + ":\n");
        assertTrue(config >= 0 && help.indexOf("--config=FILE", config) > config, help);
        assertTrue(config < help.indexOf("\n" + OptionGroup.DEPLOYMENT.heading + ":\n"), help);
    }
}
