package dev.infersim.result;

import dev.infersim.common.ConfigException;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Service-level objectives for goodput, as {@code vllm bench serve --goodput ttft:MS tpot:MS e2el:MS}: a request counts
 * towards {@code request_goodput} only if it meets every objective given. A missing objective is not checked.
 *
 * @param ttftMs TTFT bound in ms, or {@code Double.NaN} when not set
 * @param tpotMs TPOT bound in ms, or NaN
 * @param e2elMs E2EL bound in ms, or NaN
 */
public record GoodputSlo(double ttftMs, double tpotMs, double e2elMs) {

    /** No objectives: vLLM reports request_goodput as null then. */
    public static final GoodputSlo NONE = new GoodputSlo(Double.NaN, Double.NaN, Double.NaN);

    public GoodputSlo {
        checkBound("ttft", ttftMs);
        checkBound("tpot", tpotMs);
        checkBound("e2el", e2elMs);
    }

    private static void checkBound(String name, double ms) {
        ConfigException.check(Double.isNaN(ms) || (ms >= 0 && Double.isFinite(ms)),
                "--goodput %s must be a number of ms >= 0, got %s", name, ms);
    }

    /**
     * Parses vLLM's {@code KEY:VALUE} pairs, e.g. {@code [ttft:500, tpot:50]}; keys ttft, tpot, e2el. An argument may
     * hold several pairs separated by spaces ({@code "ttft:500 tpot:50"} quoted as one), which vLLM would read as one
     * malformed pair; each metric may be given once, since a repeated one would silently keep only its last value.
     */
    public static GoodputSlo parse(List<String> arguments) {
        return parse(arguments, null);
    }

    /**
     * As {@link #parse(List)}, where a value may also be a multiple, {@code ttft:4x}: that many times the same latency
     * of one request served alone, {@code alone} (asked for once, only when a multiple is given; null where no such
     * latency is known, which makes a multiple an error).
     */
    public static GoodputSlo parse(List<String> arguments, Supplier<GoodputSlo> alone) {
        Map<String, Double> bounds = new HashMap<>();
        GoodputSlo unit = null;
        for (String argument : arguments) {
            for (String pair : argument.trim().split("\\s+")) {
                int colon = pair.indexOf(':');
                ConfigException.check(colon > 0, "--goodput: expected KEY:VALUE_MS (ttft, tpot, e2el), got '%s'", pair);
                String key = pair.substring(0, colon).toLowerCase(Locale.ROOT);
                ConfigException.check(key.equals("ttft") || key.equals("tpot") || key.equals("e2el"),
                        "--goodput: unknown metric '%s'; use ttft, tpot or e2el", key);
                String text = pair.substring(colon + 1);
                boolean multiple = text.endsWith("x");
                double value;
                try {
                    value = Double.parseDouble(multiple ? text.substring(0, text.length() - 1) : text);
                } catch (NumberFormatException e) {
                    throw new ConfigException("--goodput: " + key + " needs a number of ms, or a multiple such as 4x, got '"
                            + pair + "'", e);
                }
                ConfigException.check(value >= 0 && Double.isFinite(value), "--goodput %s must be >= 0 %s, got %s", key,
                        multiple ? "times" : "ms", value);
                if (multiple) {
                    ConfigException.check(alone != null, "--goodput %s: a multiple of one request's latency alone needs the "
                            + "engine model (simulate); give ms here", pair);
                    unit = unit == null ? alone.get() : unit;
                    value *= unit.bound(key);
                }
                Double earlier = bounds.put(key, value);
                ConfigException.check(earlier == null, "--goodput: %s is given twice (%s and %s); give each metric once",
                        key, format(earlier), format(value));
            }
        }
        return new GoodputSlo(bounds.getOrDefault("ttft", Double.NaN), bounds.getOrDefault("tpot", Double.NaN),
                bounds.getOrDefault("e2el", Double.NaN));
    }

    private double bound(String key) {
        return switch (key) {
            case "ttft" -> ttftMs;
            case "tpot" -> tpotMs;
            default -> e2elMs;
        };
    }

    private static String format(Double ms) {
        return ms == null ? "" : ms == Math.rint(ms) ? Long.toString(ms.longValue()) : ms.toString();
    }

    public boolean isSet() {
        return !Double.isNaN(ttftMs) || !Double.isNaN(tpotMs) || !Double.isNaN(e2elMs);
    }

    /** Whether a request with these latencies meets every objective (TPOT is 0 for single-token outputs, as vLLM). */
    public boolean isMetBy(long ttftNanos, long tpotNanos, long e2elNanos) {
        return meets(ttftMs, ttftNanos) && meets(tpotMs, tpotNanos) && meets(e2elMs, e2elNanos);
    }

    private static boolean meets(double boundMs, long nanos) {
        return Double.isNaN(boundMs) || nanos <= boundMs * 1e6;
    }
}
