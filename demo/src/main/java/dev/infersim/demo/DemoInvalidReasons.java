package dev.infersim.demo;

import dev.infersim.bench.report.BenchResult;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why the client flagged a measured run invalid, in the demo's unit: the client judges its run in wall time (a rate of
 * 102.58 req/s at 2x is the demo's 51.29 req/s), the demo's table is in model time, so every rate and duration in the
 * client's reasons is converted (rates divided by the time scale, durations multiplied) and says so.
 */
final class DemoInvalidReasons {
    /** A duration in ms, a rate in req/s, or a rate "requested" (the arrival test's "against 107.46 requested"). */
    private static final Pattern QUANTITY = Pattern.compile("(-?[0-9][0-9,]*(?:\\.[0-9]+)?) (ms|req/s|requested)\\b");

    private DemoInvalidReasons() {
    }

    /** The run's invalid reasons with rates and durations in model time; empty for a valid run. */
    static List<String> inModelTime(BenchResult run, double timeScale) {
        List<String> out = new ArrayList<>();
        for (String reason : run.invalidReasons()) {
            out.add(inModelTime(reason, timeScale));
        }
        return out;
    }

    /** One reason with each "N ms", "N req/s" and "N requested" in model time, marked as such; unchanged at scale 1. */
    static String inModelTime(String reason, double timeScale) {
        if (timeScale == 1) {
            return reason;
        }
        Matcher m = QUANTITY.matcher(reason);
        StringBuilder s = new StringBuilder();
        boolean converted = false;
        while (m.find()) {
            String digits = m.group(1).replace(",", "");
            int decimals = digits.contains(".") ? digits.length() - digits.indexOf('.') - 1 : 0;
            double v = Double.parseDouble(digits);
            double model = "ms".equals(m.group(2)) ? v * timeScale : v / timeScale;
            m.appendReplacement(s, Matcher.quoteReplacement(
                    String.format(Locale.ROOT, "%." + decimals + "f %s", model, m.group(2))));
            converted = true;
        }
        m.appendTail(s);
        return converted ? s + " (in model time: the client's wall-clock figures converted at "
                + DemoCalibration.scale(timeScale) + "x)" : s.toString();
    }
}
