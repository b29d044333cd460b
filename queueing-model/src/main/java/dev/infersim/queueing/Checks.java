package dev.infersim.queueing;

/** Argument checks whose messages name the bad value. */
final class Checks {

    private Checks() {}

    static double positive(String name, double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(name + " must be positive and finite, got " + value);
        }
        return value;
    }

    static double nonNegative(String name, double value) {
        if (!(value >= 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(name + " must be non-negative and finite, got " + value);
        }
        return value;
    }

    static long positive(String name, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
        return value;
    }

    /** A probability strictly between 0 and 1, as percentiles need. */
    static double openUnitInterval(String name, double value) {
        if (!(value > 0 && value < 1)) {
            throw new IllegalArgumentException(name + " must be in (0, 1), got " + value);
        }
        return value;
    }
}
