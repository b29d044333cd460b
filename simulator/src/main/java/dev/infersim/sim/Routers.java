package dev.infersim.sim;

import dev.infersim.common.ConfigException;

import java.util.List;
import java.util.Locale;

/**
 * The registry of routers, by the names {@code --router} takes:
 * <ul>
 *   <li>{@code round-robin}: {@link RoundRobinRouter}</li>
 *   <li>{@code least-outstanding-requests} (also {@code least-loaded}): {@link LeastOutstandingRequestsRouter}</li>
 *   <li>{@code least-kv-usage}: {@link LeastKvUsageRouter}</li>
 *   <li>{@code power-of-two-choices}: {@link PowerOfTwoChoicesRouter}, seeded from the run's seed</li>
 *   <li>{@code prefix-affinity}: {@link PrefixAffinityRouter} with its defaults</li>
 *   <li>{@code lora-affinity}: {@link LoraAffinityRouter}</li>
 * </ul>
 */
public final class Routers {

    private Routers() {
    }

    public static List<String> names() {
        return List.of("round-robin", "least-outstanding-requests", "least-kv-usage", "power-of-two-choices",
                "prefix-affinity", "lora-affinity");
    }

    /**
     * A new router by name (case-insensitive; underscores for dashes are accepted).
     *
     * @param seed seeds the routers that draw at random
     */
    public static Router byName(String name, long seed) {
        return byName(name, seed, TieBreak.ROUND_ROBIN);
    }

    /**
     * A new router by name, breaking ties between equally scored replicas as {@code tieBreak} says.
     *
     * @param seed seeds the routers that draw at random
     */
    public static Router byName(String name, long seed, TieBreak tieBreak) {
        return switch (name.toLowerCase(Locale.ROOT).replace('_', '-')) {
            case "round-robin" -> new RoundRobinRouter();
            case "least-outstanding-requests", "least-loaded" -> new LeastOutstandingRequestsRouter(tieBreak);
            case "least-kv-usage" -> new LeastKvUsageRouter(tieBreak);
            case "power-of-two-choices" -> new PowerOfTwoChoicesRouter(seed);
            case "prefix-affinity" -> new PrefixAffinityRouter();
            case "lora-affinity" -> new LoraAffinityRouter(tieBreak);
            default -> throw new ConfigException("--router: unknown router '" + name + "'; use one of "
                    + String.join(", ", names()));
        };
    }
}
