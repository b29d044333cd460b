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
    private static String printed(double simulatedTokensPerS, double predictedTokensPerS) {
        DemoCommand.Side measured = new DemoCommand.Side(30, 70, 10, simulatedTokensPerS, 40, false);
        DemoCommand.Side simulated = new DemoCommand.Side(30, 70, 10, simulatedTokensPerS, 40, false);
        DemoCommand.Side predicted = new DemoCommand.Side(30, 70, 10, predictedTokensPerS, 40, false);
        DemoCommand.Row row = new DemoCommand.Row(43.76, 0.9, measured, simulated, predicted, 8, true);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        new DemoReport(List.of(row), 48.6, 48.6, Double.NaN, 2).print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aThroughputGapBeyondTenPercentIsExplainedAndOneWithinIsNot() {
        String out = printed(4100, 5651);
        assertTrue(out.contains("output tok/s predicted is +38% vs simulated"), out);
        assertTrue(out.contains("Poisson arrivals and output lengths"), out);
        assertFalse(printed(5400, 5651).contains("output tok/s predicted is"), "within 10%: no note");
    }
}
