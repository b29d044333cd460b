package dev.infersim.sim;

import dev.infersim.workload.WorkloadRequest;

/** Sends requests to replicas in turn (Vidur's and llm-d's round_robin). */
public final class RoundRobinRouter implements Router {
    private int next;

    @Override
    public int route(WorkloadRequest request, Replica[] replicas) {
        int chosen = next;
        next = (next + 1) % replicas.length;
        return chosen;
    }
}
