package dev.infersim.bench.harness;

import dev.infersim.common.ConfigException;

import java.nio.file.Path;
import java.util.Locale;

/** The time units harness formats declare, as milliseconds per unit. */
final class TimeUnits {
    private TimeUnits() {
    }

    /**
     * Milliseconds in one {@code unit} ({@code s}, {@code ms}, {@code us}, {@code ns}, and their long names); an unknown
     * unit is bad input naming the file, the field and the line.
     */
    static double toMs(String unit, Path file, String field, int lineNo) {
        return switch (unit.trim().toLowerCase(Locale.ROOT)) {
            case "s", "sec", "secs", "second", "seconds" -> 1e3;
            case "ms", "msec", "millisecond", "milliseconds" -> 1;
            case "us", "µs", "usec", "microsecond", "microseconds" -> 1e-3;
            case "ns", "nsec", "nanosecond", "nanoseconds" -> 1e-6;
            default -> throw new ConfigException(file + ": line " + lineNo + ": " + field + " has unit '" + unit
                    + "' (s, ms, us or ns expected)");
        };
    }
}
