package dev.infersim.sim;

import dev.infersim.workload.WorkloadRequest;

/** Sends requests to replicas in turn (Vidur's and llm-d's round_robin, nginx's and HAProxy's default). */
public final class RoundRobinRouter implements Router {
    private int next;

    @Override
    public int route(WorkloadRequest request, Replica[] replicas) {
        int chosen = next % replicas.length;
        next = chosen + 1;
        return chosen;
    }
}
