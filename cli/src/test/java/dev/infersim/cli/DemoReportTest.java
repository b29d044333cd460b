package dev.infersim.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The demo's table and its plain-words notes, from fixed numbers. */
class DemoReportTest {
    /** One row in which only TPOT differs: simulated in the short run, in the long run, and predicted. */
    private static String printed(double shortRunTpot, double steadyTpot, double predictedTpot) {
        DemoCommand.Side simulated = new DemoCommand.Side(30, 70, shortRunTpot, 5600, 40, 1, 40, 40, false);
        DemoCommand.Side steady = new DemoCommand.Side(30, 70, steadyTpot, 5600, 40, 1, 40, 40, false);
        DemoCommand.Side predicted = new DemoCommand.Side(30, 70, predictedTpot, 5600, 40, 1, 40, 40, false);
        DemoCommand.Row row = new DemoCommand.Row(43.76, 0.9, simulated, simulated, predicted, steady, 8, true, List.of());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        new DemoReport(List.of(row), 48.6, 48.6, 2, 150, "continuous-batching queueing chain", false).print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
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
        assertTrue(out.contains("the mean iteration of the batch it finds on arrival"), out);
    }

    /** A side at one rate: TTFT p99, requests finished per second late in the run, the rate sent; overloaded below 90%. */
    private static DemoCommand.Side side(double ttftP99, double taken, double sent) {
        return new DemoCommand.Side(ttftP99 / 2, ttftP99, 10, taken * 128, taken, 1, sent, taken, false);
    }

    private static DemoCommand.Row row(double rate, DemoCommand.Side measured, DemoCommand.Side predicted) {
        return new DemoCommand.Row(rate, rate / 50, measured, measured, predicted, measured, 1, true, List.of());
    }

    @Test
    void theKneeIsTheThroughputPlateauOnceARateIsOverloadedAndTheSloRateStopsAtTheFirstMiss() {
        DemoCommand.Side unstable = new DemoCommand.Side(Double.NaN, Double.NaN, Double.NaN, 50 * 128, 50, Double.NaN, 65, 50, true);
        DemoReport report = new DemoReport(List.of(
                row(25, side(60, 25, 25), side(55, 25, 25)),
                row(45, side(120, 44, 45), side(110, 45, 45)),
                row(65, side(900, 48, 65), unstable)), 50, 47, 2, 150, "continuous-batching queueing chain", false);
        assertEquals(48, report.measuredKnee(), 1e-9);
        assertEquals(48, report.simulatedKnee(), 1e-9);
        assertEquals(50, report.predictedKnee(), 1e-9);
        assertEquals(45, report.highestRateMeetingSlo(DemoReport.MEASURED), 1e-9);
        assertEquals(45, report.highestRateMeetingSlo(DemoReport.PREDICTED), 1e-9);
    }

    @Test
    void aSweepThatNeverOverloadsHasNoKnee() {
        DemoReport report = new DemoReport(List.of(row(25, side(60, 25, 25), side(55, 25, 25))), 50, 47, 2, 150, "continuous-batching queueing chain", false);
        assertTrue(Double.isNaN(report.measuredKnee()));
        assertTrue(Double.isNaN(report.simulatedKnee()));
    }

    @Test
    void withinTenPercentThereIsNoNote() {
        assertFalse(printed(24.0, 25.3, 25.7).contains("TPOT p50 predicted is"));
    }
}
