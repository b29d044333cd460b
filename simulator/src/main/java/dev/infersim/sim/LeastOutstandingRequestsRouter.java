package dev.infersim.sim;

import dev.infersim.workload.WorkloadRequest;

/**
 * Sends each request to the replica with the fewest outstanding requests (running plus waiting; Vidur's "lor", nginx's
 * {@code least_conn}, HAProxy's {@code leastconn}), the lowest index on ties.
 */
public final class LeastOutstandingRequestsRouter implements Router {

    @Override
    public int route(WorkloadRequest request, Replica[] replicas) {
        int best = 0;
        int bestLoad = replicas[0].load();
        for (int i = 1; i < replicas.length; i++) {
            int load = replicas[i].load();
            if (load < bestLoad) {
                best = i;
                bestLoad = load;
            }
        }
        return best;
    }
}
