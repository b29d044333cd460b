package dev.infersim.server.config;

import java.util.List;

/**
 * Fault injection: with probability {@code failureRate} a request suffers one of {@code types} (chosen uniformly).
 *
 * @param failureRate       probability in [0, 1] that a request gets a fault
 * @param types             faults to choose from (non-empty when failureRate > 0)
 * @param afterTokens       tokens streamed before a disconnect or stall
 * @param stallMs           length of a mid-stream stall, wall milliseconds
 * @param slowFirstTokenMs  extra wall delay of the first token
 */
public record FaultSettings(double failureRate, List<FaultType> types, int afterTokens, long stallMs, long slowFirstTokenMs) {
    public static final FaultSettings NONE = new FaultSettings(0, List.of(), 3, 1000, 2000);

    public FaultSettings {
        types = List.copyOf(types);
        if (!(failureRate >= 0 && failureRate <= 1)) {
            throw new IllegalArgumentException("--failure-rate (failure_rate) must be in [0, 1], got " + failureRate);
        }
        if (failureRate > 0 && types.isEmpty()) {
            throw new IllegalArgumentException("--failure-rate (failure_rate) " + failureRate
                    + " needs at least one fault in --failure-types (failure_types)");
        }
        if (afterTokens < 0) {
            throw new IllegalArgumentException("--fault-after-tokens (fault_after_tokens) must be >= 0, got " + afterTokens);
        }
        if (stallMs < 0) {
            throw new IllegalArgumentException("--stall-ms (stall_ms) must be >= 0, got " + stallMs);
        }
        if (slowFirstTokenMs < 0) {
            throw new IllegalArgumentException("--slow-first-token-ms (slow_first_token_ms) must be >= 0, got " + slowFirstTokenMs);
        }
    }

    /** Parses a comma-separated list such as {@code rate_limit,server_error}; the message names the bad entry. */
    public static List<FaultType> parseTypes(String csv) {
        if (csv == null || csv.isBlank()) {
            return List.of();
        }
        return java.util.Arrays.stream(csv.split(",")).map(String::trim).filter(s -> !s.isEmpty()).map(s -> {
            FaultType t = FaultType.byName(s);
            if (t == null) {
                throw new IllegalArgumentException("--failure-types: unknown failure type '" + s + "'; known: rate_limit, server_error, "
                        + "service_unavailable, auth, context_length, disconnect, stall, slow_first_token");
            }
            return t;
        }).toList();
    }

    /**
     * The fault of the server's {@code seq}-th request, or null: two draws from the server's {@code seed}, the same for
     * the same request whatever API it came by.
     */
    public FaultType pickFor(long seed, long seq) {
        long salt = seed ^ 0xFA17L;
        return pick(dev.infersim.common.SplitMix64.uniformAt(salt, seq), dev.infersim.common.SplitMix64.uniformAt(salt, ~seq));
    }

    /** The fault for a request with uniform draws {@code u1} (whether) and {@code u2} (which), or null. */
    public FaultType pick(double u1, double u2) {
        if (types.isEmpty() || u1 >= failureRate) {
            return null;
        }
        return types.get(Math.min(types.size() - 1, (int) (u2 * types.size())));
    }
}
