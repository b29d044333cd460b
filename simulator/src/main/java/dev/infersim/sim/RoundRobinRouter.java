package dev.infersim.sim;

/** Sends requests to replicas in turn (Vidur's and llm-d's round_robin, nginx's and HAProxy's default). */
public final class RoundRobinRouter implements Router {
    private int next;

    @Override
    public int route(RoutedRequest request, RoutingTarget[] replicas) {
        int chosen = next % replicas.length;
        next = chosen + 1;
        return chosen;
    }
}
