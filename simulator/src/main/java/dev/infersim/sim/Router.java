package dev.infersim.sim;

import dev.infersim.engine.ConfigException;
import dev.infersim.workload.WorkloadRequest;

import java.util.Locale;

/**
 * Chooses the replica an arriving request goes to. Implementations may keep state (a round-robin cursor) and must be
 * deterministic, so a seeded run is reproducible.
 */
public interface Router {

    /** Index into {@code replicas} of the replica that serves {@code request}. */
    int route(WorkloadRequest request, Replica[] replicas);

    /** A router by name: {@code round-robin} or {@code least-loaded}. */
    static Router byName(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "round-robin", "round_robin" -> new RoundRobinRouter();
            case "least-loaded", "least_loaded" -> new LeastLoadedRouter();
            default -> throw new ConfigException(
                    "--router: unknown router '" + name + "'; use round-robin or least-loaded");
        };
    }
}
