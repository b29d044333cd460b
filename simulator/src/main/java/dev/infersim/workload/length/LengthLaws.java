package dev.infersim.workload.length;

import com.fasterxml.jackson.databind.Module;
import com.fasterxml.jackson.databind.module.SimpleModule;

import java.util.Locale;

/**
 * The length laws by name: how a command-line flag ({@link #parse}) and a YAML workload ({@link #module}, as
 * {@link LengthDistributionDeserializer} reads it) write a {@link LengthDistribution}.
 */
public final class LengthLaws {
    private LengthLaws() {
    }

    /** Reads every {@link LengthDistribution} of a YAML or JSON document as {@link LengthDistributionDeserializer} says. */
    public static Module module() {
        return new SimpleModule("length-laws").addDeserializer(LengthDistribution.class,
                new LengthDistributionDeserializer());
    }

    /**
     * A length from a one-word spec, as command-line flags take it: {@code fixed:N}, {@code uniform:MIN:MAX},
     * {@code geometric:MEAN} (also {@code exponential:MEAN}: the geometric law is the discrete exponential) or
     * {@code lognormal:MEDIAN:SIGMA}, every length at least 1 token; {@code none} gives null.
     *
     * @throws IllegalArgumentException naming what is wrong with the spec
     */
    public static LengthDistribution parse(String spec) {
        String[] parts = spec.trim().toLowerCase(Locale.ROOT).split(":");
        String shape = switch (parts[0]) {
            case "none" -> "none";
            case "fixed", "geometric", "exponential" -> parts[0] + ":N";
            case "uniform" -> "uniform:MIN:MAX";
            case "lognormal" -> "lognormal:MEDIAN:SIGMA";
            default -> throw new IllegalArgumentException(
                    "expected none, fixed:N, uniform:MIN:MAX, geometric:MEAN or lognormal:MEDIAN:SIGMA");
        };
        if (parts.length != shape.split(":").length) {
            throw new IllegalArgumentException("expected " + shape);
        }
        try {
            return switch (parts[0]) {
                case "none" -> null;
                case "fixed" -> new FixedLength(atLeastOne(Integer.parseInt(parts[1])));
                case "uniform" -> new UniformLength(atLeastOne(Integer.parseInt(parts[1])), Integer.parseInt(parts[2]));
                case "lognormal" -> LogNormalLength.ofMedian(Double.parseDouble(parts[1]), Double.parseDouble(parts[2]), 1,
                        Integer.MAX_VALUE);
                default -> new GeometricLength(Double.parseDouble(parts[1]));
            };
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a number in " + shape);
        }
    }

    private static int atLeastOne(int tokens) {
        if (tokens < 1) {
            throw new IllegalArgumentException("lengths start at 1 token, got " + tokens);
        }
        return tokens;
    }
}
