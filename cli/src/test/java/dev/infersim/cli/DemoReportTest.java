package dev.infersim.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The demo's table and its plain-words notes, from fixed numbers. */
class DemoReportTest {
    /** One row in which only TPOT differs: simulated in the short run, in the long run, and predicted. */
    private static String printed(double shortRunTpot, double steadyTpot, double predictedTpot) {
        DemoCommand.Side simulated = new DemoCommand.Side(30, 70, shortRunTpot, 5600, 40, false);
        DemoCommand.Side steady = new DemoCommand.Side(30, 70, steadyTpot, 5600, 40, false);
        DemoCommand.Side predicted = new DemoCommand.Side(30, 70, predictedTpot, 5600, 40, false);
        DemoCommand.Row row = new DemoCommand.Row(43.76, 0.9, simulated, simulated, predicted, steady, 8, true);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        new DemoReport(List.of(row), 48.6, 48.6, Double.NaN, 2).print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aGapTheLongSimulationClosesIsBlamedOnTheRunsLength() {
        String out = printed(15.3, 25.3, 25.7);
        assertTrue(out.contains("TPOT p50 predicted is +68% vs simulated but +2% vs 20,000 simulated requests"), out);
        assertTrue(out.contains("does not reach"), out);
    }

    @Test
    void aGapTheLongSimulationKeepsIsBlamedOnTheModel() {
        String out = printed(15.3, 15.5, 25.7);
        assertTrue(out.contains("TPOT p50 predicted is +68% vs simulated and +66% vs 20,000 simulated requests"), out);
        assertTrue(out.contains("linear fit"), out);
    }

    @Test
    void withinTenPercentThereIsNoNote() {
        assertFalse(printed(24.0, 25.3, 25.7).contains("TPOT p50 predicted is"));
    }
}
