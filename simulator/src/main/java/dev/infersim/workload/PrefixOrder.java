package dev.infersim.workload;

/** In which order the requests of a prefix-repetition workload visit the shared prefixes. */
public enum PrefixOrder {
    /**
     * vLLM's prefix_repetition: every prefix gets the same number of requests, in a uniformly random order (a
     * shuffle of the whole request list, drawn sequentially here so nothing is held in memory).
     */
    SHUFFLE,
    /** Prefix 0, 1, ..., G-1, 0, 1, ...: the first G requests are cold, every later one is warm. */
    ROUND_ROBIN,
    /** Each request picks a prefix uniformly and independently. */
    RANDOM;

    /** Parses {@code shuffle}, {@code round-robin} / {@code round_robin} or {@code random}, case-insensitively. */
    public static PrefixOrder parse(String name) {
        String normalized = name.trim().replace('-', '_').toUpperCase(java.util.Locale.ROOT);
        for (PrefixOrder order : values()) {
            if (order.name().equals(normalized)) {
                return order;
            }
        }
        throw new IllegalArgumentException("prefix order must be shuffle, round-robin or random, got '" + name + "'");
    }
}
