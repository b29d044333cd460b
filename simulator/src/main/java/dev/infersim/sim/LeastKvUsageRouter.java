package dev.infersim.sim;

/**
 * Sends each request to the replica whose KV cache is least used (vLLM's {@code kv_cache_usage_perc}, the Gateway API
 * Inference Extension's KV-cache utilization scorer), then the fewest outstanding requests; remaining ties as
 * {@link TieBreak} says.
 */
public final class LeastKvUsageRouter implements Router {
    private final TieBreak.Ties ties;

    public LeastKvUsageRouter(TieBreak tieBreak) {
        ties = new TieBreak.Ties(tieBreak);
    }

    /** Ties broken round robin. */
    public LeastKvUsageRouter() {
        this(TieBreak.ROUND_ROBIN);
    }

    @Override
    public int route(RoutedRequest request, RoutingTarget[] replicas) {
        double bestUsage = Double.MAX_VALUE;
        int bestLoad = Integer.MAX_VALUE;
        for (RoutingTarget r : replicas) {
            double usage = r.kvCacheUsage();
            if (usage < bestUsage || (usage == bestUsage && r.load() < bestLoad)) {
                bestUsage = usage;
                bestLoad = r.load();
            }
        }
        ties.reset(replicas.length);
        for (int i = 0; i < replicas.length; i++) {
            if (replicas[i].kvCacheUsage() == bestUsage && replicas[i].load() == bestLoad) {
                ties.tie(i);
            }
        }
        return ties.pick();
    }
}
