package dev.infersim.workload.arrival;

/** How a ramp-up moves the request rate from its start to its end value (vLLM {@code --ramp-up-strategy}). */
public enum RampStrategy {
    /** rate = start + (end - start) * progress. */
    LINEAR,
    /** rate = start * (end / start) ^ progress; needs start > 0. */
    EXPONENTIAL;

    /** The rate at {@code progress} in [0, 1] of the ramp. */
    double rateAt(double startPerS, double endPerS, double progress) {
        return this == LINEAR
                ? startPerS + (endPerS - startPerS) * progress
                : startPerS * Math.pow(endPerS / startPerS, progress);
    }

    /** Parses vLLM's spelling ({@code linear}, {@code exponential}), case-insensitively. */
    public static RampStrategy parse(String name) {
        for (RampStrategy s : values()) {
            if (s.name().equalsIgnoreCase(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("ramp-up strategy must be linear or exponential, got '" + name + "'");
    }
}
