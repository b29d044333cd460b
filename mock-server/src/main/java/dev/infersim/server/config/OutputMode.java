package dev.infersim.server.config;

/** What the generated text is: {@code lorem} (seeded common words) or {@code echo} (the prompt, repeated as needed). */
public enum OutputMode {
    LOREM,
    ECHO;

    /** Parses {@code lorem} or {@code echo}; the message names the flag. */
    public static OutputMode parse(String value) {
        for (OutputMode m : values()) {
            if (m.name().equalsIgnoreCase(value)) {
                return m;
            }
        }
        throw new IllegalArgumentException("--output-mode: expected lorem or echo, got '" + value + "'");
    }
}
