package dev.infersim.sim;

import dev.infersim.workload.WorkloadRequest;

/**
 * Sends each request to the replica whose KV cache is least used (vLLM's {@code kv_cache_usage_perc}, the Gateway API
 * Inference Extension's KV-cache utilization scorer), then the fewest outstanding requests, then the lowest index.
 */
public final class LeastKvUsageRouter implements Router {

    @Override
    public int route(WorkloadRequest request, Replica[] replicas) {
        int best = 0;
        for (int i = 1; i < replicas.length; i++) {
            double usage = replicas[i].engine().kvCacheUsage();
            double bestUsage = replicas[best].engine().kvCacheUsage();
            if (usage < bestUsage || (usage == bestUsage && replicas[i].load() < replicas[best].load())) {
                best = i;
            }
        }
        return best;
    }
}
