package dev.infersim.cli.options;

import dev.infersim.workload.WorkloadSpec;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where every command's numbers are converted and bounded, whatever command declares them: numbers are read in our
 * words ({@link #register}: a whole number that is no whole number, one beyond 64 bits, NaN, or a decimal too large to
 * be finite, such as {@code 1e999}, is refused naming the flag), and the counts and rates a run's size grows with are
 * held to the maxima below ({@link #check}), which their {@code --help} states. Without them {@code simulate
 * --num-prompts 99999999999} ran until killed and {@code --request-rate 1e308} ran as {@code inf}.
 */
public final class OptionLimits {
    /** Requests a run may send or simulate: a day at 100 req/s is 8.6 million. */
    public static final long MAX_PROMPTS = 10_000_000L;
    /** Requests in flight, users of a closed loop. */
    public static final long MAX_CONCURRENCY = 1_000_000L;
    /** Tokens of one prompt or reply a workload flag may ask for (no bundled model has a context over 1,048,576). */
    static final long MAX_TOKENS = 10_000_000L;
    /** Requests per second; faster is sending all at once, which is {@code inf}. */
    public static final long MAX_RATE = WorkloadSpec.MAX_RATE_PER_S;

    /** The bounds of the counts and rates, by option name; a rate is above 0, so its minimum is exclusive. */
    private record Bound(double min, boolean minExclusive, double max) {
        public void check(CommandLine command, String option, Number value) {
            double v = value.doubleValue();
            if (v > max) {
                throw new CommandLine.ParameterException(command, String.format(Locale.ROOT, "%s: %s is more than %,d, "
                        + "the most it takes", option, value, (long) max));
            }
            if (v < min || minExclusive && v == min) {
                throw new CommandLine.ParameterException(command, String.format(Locale.ROOT, "%s: %s is below %s, the "
                        + "least it takes", option, value, minExclusive ? "or at " + (long) min : Long.toString((long) min)));
            }
        }
    }

    private static final Bound PROMPTS = new Bound(1, false, MAX_PROMPTS);
    private static final Bound WARMUPS = new Bound(0, false, MAX_PROMPTS);
    private static final Bound CONCURRENCY = new Bound(1, false, MAX_CONCURRENCY);
    private static final Bound TOKENS = new Bound(0, false, MAX_TOKENS);
    private static final Bound RATE = new Bound(0, true, MAX_RATE);
    private static final Map<String, Bound> BOUNDS = Map.ofEntries(
            Map.entry("--num-prompts", PROMPTS),
            Map.entry("--num-warmups", WARMUPS),
            Map.entry("--max-concurrency", CONCURRENCY),
            Map.entry("--concurrencies", CONCURRENCY),
            Map.entry("--random-input-len", TOKENS),
            Map.entry("--random-output-len", TOKENS),
            Map.entry("--random-prefix-len", TOKENS),
            Map.entry("--prefix-repetition-prefix-len", TOKENS),
            Map.entry("--prefix-repetition-suffix-len", TOKENS),
            Map.entry("--prefix-repetition-output-len", TOKENS),
            Map.entry("--sharegpt-output-len", TOKENS),
            Map.entry("--ramp-up-start-rps", RATE),
            Map.entry("--ramp-up-end-rps", RATE),
            Map.entry("--target-rate", RATE),
            Map.entry("--request-rate", RATE)); // check-harness' (a number); the others' (with inf) WorkloadSpec.parseRate bounds

    private OptionLimits() {
    }

    /** Registers the number converters on {@code cli}, which its subcommands (added before) take over. */
    public static void register(CommandLine cli) {
        cli.registerConverter(Integer.class, s -> (int) whole(s, Integer.MIN_VALUE, Integer.MAX_VALUE));
        cli.registerConverter(int.class, s -> (int) whole(s, Integer.MIN_VALUE, Integer.MAX_VALUE));
        cli.registerConverter(Long.class, s -> whole(s, Long.MIN_VALUE, Long.MAX_VALUE));
        cli.registerConverter(long.class, s -> whole(s, Long.MIN_VALUE, Long.MAX_VALUE));
        cli.registerConverter(Double.class, OptionLimits::decimal);
        cli.registerConverter(double.class, OptionLimits::decimal);
    }

    /**
     * Refuses a count or rate given on the command line beyond its bound, naming the option (picocli answers the
     * {@link CommandLine.ParameterException} with one line and exit code 2). Where {@code --request-rate} and
     * {@code --request-rates} also take {@code inf} (text, not a number here), they are bounded where they are read
     * ({@link WorkloadSpec#parseRate}), to the same maximum.
     */
    public static void check(CommandLine.ParseResult parsed) {
        for (CommandLine.ParseResult r = parsed; r != null; r = r.subcommand()) {
            for (OptionSpec o : r.matchedOptions()) {
                Bound b = BOUNDS.get(o.longestName());
                Object value = o.getValue();
                if (b == null || value == null) {
                    continue;
                }
                for (Object v : value instanceof Collection<?> c ? c : List.of(value)) {
                    if (v instanceof Number n) {
                        b.check(r.commandSpec().commandLine(), o.longestName(), n);
                    }
                }
            }
        }
    }

    private static long whole(String text, long min, long max) {
        String t = text.trim();
        if (!t.matches("[+-]?\\d+")) {
            throw new CommandLine.TypeConversionException("'" + text + "' is not a whole number");
        }
        java.math.BigInteger v = new java.math.BigInteger(t);
        if (v.compareTo(java.math.BigInteger.valueOf(max)) > 0 || v.compareTo(java.math.BigInteger.valueOf(min)) < 0) {
            throw new CommandLine.TypeConversionException(String.format(Locale.ROOT, "%s is beyond the numbers it takes (%,d to %,d)",
                    t, min, max));
        }
        return v.longValueExact();
    }

    /** A decimal number; {@code inf} only when spelled so (an option that takes it says so), never NaN or an overflow. */
    private static double decimal(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.equals("inf") || t.equals("+inf") || t.equals("infinity") || t.equals("+infinity")) {
            return Double.POSITIVE_INFINITY;
        }
        if (!t.matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)(e[+-]?\\d+)?")) {
            throw new CommandLine.TypeConversionException("'" + text + "' is not a number");
        }
        double v = Double.parseDouble(t);
        if (Double.isInfinite(v)) {
            throw new CommandLine.TypeConversionException(text + " is beyond the largest number (about 1.8e308)");
        }
        return v;
    }
}
