package dev.infersim.demo;

import java.util.Locale;

/**
 * Numbers as the demo writes them in sentences: latencies to three significant figures, a difference as a signed
 * percentage that never reads "-0%" and turns into a ratio past doubling ("39 times" rather than "+3796%"), counts
 * with their noun ("no extra runs", "1 extra run"), and the direction of a change said from the change itself.
 */
final class DemoWords {
    /** Within this relative change two values are the same, for words about direction. */
    static final double SAME = 0.01;

    private DemoWords() {
    }

    /** Milliseconds to about three significant figures: "0.421", "7.5", "150", "4,800". */
    static String ms(double v) {
        if (!Double.isFinite(v)) {
            return "-";
        }
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%,.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f", v);
    }

    /**
     * {@code a} against {@code b} as people say it: "+12%", "-8%", "0%" (never "-0%"), and from twice on "2.6 times",
     * below half "0.31 times".
     */
    static String relative(double a, double b) {
        double ratio = a / b;
        if (!Double.isFinite(ratio)) {
            return "-";
        }
        if (ratio >= 2 || ratio <= 0.5) {
            return String.format(Locale.ROOT, ratio >= 10 || ratio < 0.1 ? "%.3g times" : "%.2g times", ratio)
                    .replace(".0 times", " times");
        }
        long pct = Math.round(100 * (ratio - 1));
        return pct == 0 ? "0%" : String.format(Locale.ROOT, "%+d%%", pct);
    }

    /** "+12% vs simulated", "3.5 times simulated": {@code a} against {@code b}, which is called {@code name}. */
    static String against(double a, double b, String name) {
        String r = relative(a, b);
        return r.endsWith("times") ? r + " " + name : r + " vs " + name;
    }

    /** "rises", "falls" or "stays within 1%": from {@code from} to {@code to}. */
    static String direction(double from, double to) {
        double change = to / from - 1;
        return Math.abs(change) <= SAME ? String.format(Locale.ROOT, "stays within %.0f%%", 100 * SAME)
                : change > 0 ? "rises" : "falls";
    }

    /** A share as a percentage with no more digits than it has: "5%", "2.5%". */
    static String percent(double share) {
        return java.math.BigDecimal.valueOf(100 * share).round(new java.math.MathContext(3))
                .stripTrailingZeros().toPlainString() + "%";
    }

    /** "no extra runs", "1 extra run", "3 extra runs". */
    static String count(int n, String noun) {
        return n == 0 ? "no " + noun + "s" : n + " " + noun + (n == 1 ? "" : "s");
    }
}
