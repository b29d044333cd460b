package dev.infersim.sim;

import dev.infersim.common.SplitMix64;

/**
 * The power of two choices (Mitzenmacher, "The Power of Two Choices in Randomized Load Balancing", IEEE TPDS 2001;
 * Envoy's and HAProxy's {@code random(2)}): draws two distinct replicas uniformly and sends the request to the one with
 * fewer outstanding requests, the first drawn on ties. Draws come from one seeded SplitMix64 stream.
 */
public final class PowerOfTwoChoicesRouter implements Router {
    private final SplitMix64 random;

    public PowerOfTwoChoicesRouter(long seed) {
        random = new SplitMix64(seed);
    }

    @Override
    public int route(RoutedRequest request, RoutingTarget[] replicas) {
        int n = replicas.length;
        if (n == 1) {
            return 0;
        }
        int first = random.nextInt(n);
        int second = random.nextInt(n - 1);
        if (second >= first) {
            second++;
        }
        return replicas[second].load() < replicas[first].load() ? second : first;
    }
}
