package dev.infersim.sim;

import dev.infersim.common.Registry;

import java.util.List;

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
    private record Arguments(long seed, TieBreak tieBreak) {
    }

    private static final Registry<Arguments, Router> REGISTRY = new Registry<Arguments, Router>("--router", "router")
            .register("round-robin", a -> new RoundRobinRouter())
            .register("least-outstanding-requests", a -> new LeastOutstandingRequestsRouter(a.tieBreak()), "least-loaded")
            .register("least-kv-usage", a -> new LeastKvUsageRouter(a.tieBreak()))
            .register("power-of-two-choices", a -> new PowerOfTwoChoicesRouter(a.seed()))
            .register("prefix-affinity", a -> new PrefixAffinityRouter())
            .register("lora-affinity", a -> new LoraAffinityRouter(a.tieBreak()));

    private Routers() {
    }

    public static List<String> names() {
        return REGISTRY.names();
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
        return REGISTRY.create(name, new Arguments(seed, tieBreak));
    }
}
