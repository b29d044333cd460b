package dev.infersim.sim;

/**
 * Chooses the replica an arriving request goes to, among the replicas ready to take requests. Implementations may keep
 * state (a round-robin cursor, a hash ring, a seeded generator) and must be deterministic, so a seeded run is
 * reproducible. {@link Routers} looks them up by name. The same instances route in the simulator (virtual time) and at
 * a live fleet's front door ({@code infersim serve --router}, real time): they read only {@link RoutingTarget} and
 * {@link RoutedRequest}. Not thread-safe: a caller routes one request at a time.
 */
public interface Router {

    /**
     * Index into {@code replicas} of the replica that serves {@code request}.
     *
     * @param replicas the replicas taking requests now, at least one; the set may change between calls as a fleet
     *                 scales
     */
    int route(RoutedRequest request, RoutingTarget[] replicas);
}
