package dev.infersim.server;

import org.apache.commons.math3.distribution.ExponentialDistribution;
import org.apache.commons.math3.distribution.LogNormalDistribution;
import org.apache.commons.math3.distribution.RealDistribution;

import java.util.Locale;

/**
 * The number of tokens after which the mock model emits EOS, drawn per request when the client did not set
 * {@code ignore_eos}. The engine caps it at {@code max_tokens} (finish_reason {@code length}) and holds it back until
 * {@code min_tokens}. Draws are inverse-CDF of a caller-supplied uniform, so a seeded request always gets the same length.
 *
 * <p>Spec strings: {@code fixed:N}, {@code uniform:MIN:MAX}, {@code exponential:MEAN}, {@code lognormal:MEDIAN:SIGMA}.
 *
 * @param spec  the spec string it was parsed from
 * @param kind  fixed, uniform, exponential or lognormal
 * @param a     N, MIN, MEAN or MEDIAN
 * @param b     MAX or SIGMA (0 when unused)
 */
public record OutputLengths(String spec, String kind, double a, double b) {

    /** The default: log-normal with median 256 tokens and sigma 0.7, a chat-like long tail. */
    public static final OutputLengths DEFAULT = parse("lognormal:256:0.7");

    public OutputLengths {
        switch (kind) {
            case "fixed", "exponential" -> require(a >= 1, spec, "the length must be >= 1");
            case "uniform" -> require(a >= 1 && b >= a, spec, "need 1 <= MIN <= MAX");
            case "lognormal" -> require(a >= 1 && b > 0, spec, "need MEDIAN >= 1 and SIGMA > 0");
            default -> require(false, spec, "unknown distribution '" + kind + "'");
        }
    }

    /** Parses a spec; the message names {@code --output-len-dist} and the bad value. */
    public static OutputLengths parse(String spec) {
        String[] parts = spec.trim().toLowerCase(Locale.ROOT).split(":");
        try {
            return switch (parts[0]) {
                case "fixed", "exponential" -> {
                    require(parts.length == 2, spec, "expected " + parts[0] + ":N");
                    yield new OutputLengths(spec, parts[0], Double.parseDouble(parts[1]), 0);
                }
                case "uniform", "lognormal" -> {
                    require(parts.length == 3, spec, "expected " + parts[0] + (parts[0].equals("uniform") ? ":MIN:MAX" : ":MEDIAN:SIGMA"));
                    yield new OutputLengths(spec, parts[0], Double.parseDouble(parts[1]), Double.parseDouble(parts[2]));
                }
                default -> throw invalid(spec, "expected fixed:N, uniform:MIN:MAX, exponential:MEAN or lognormal:MEDIAN:SIGMA");
            };
        } catch (NumberFormatException e) {
            throw invalid(spec, "not a number");
        }
    }

    /** The EOS position for a uniform draw {@code u} in [0, 1): at least 1 token. */
    public int draw(double u) {
        double x = switch (kind) {
            case "fixed" -> a;
            case "uniform" -> a + Math.floor(u * (b - a + 1));
            default -> distribution().inverseCumulativeProbability(Math.min(u, 1 - 1e-12));
        };
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE - 1, Math.round(x)));
    }

    private RealDistribution distribution() {
        return kind.equals("exponential") ? new ExponentialDistribution(null, a)
                : new LogNormalDistribution(null, Math.log(a), b);
    }

    private static void require(boolean ok, String spec, String why) {
        if (!ok) {
            throw invalid(spec, why);
        }
    }

    private static IllegalArgumentException invalid(String spec, String why) {
        return new IllegalArgumentException("--output-len-dist '" + spec + "': " + why);
    }
}
