package dev.infersim.sim;

/**
 * Sends each request to the replica whose KV cache is least used (vLLM's {@code kv_cache_usage_perc}, the Gateway API
 * Inference Extension's KV-cache utilization scorer), then the fewest outstanding requests; remaining ties as
 * {@link TieBreak} says. Each replica's usage and load are read once per decision ({@link SignalReads}): a live
 * replica's usage changes while the router runs.
 */
public final class LeastKvUsageRouter implements Router {
    private final TieBreak.Ties ties;
    private final SignalReads reads = new SignalReads();

    public LeastKvUsageRouter(TieBreak tieBreak) {
        ties = new TieBreak.Ties(tieBreak);
    }

    /** Ties broken round robin. */
    public LeastKvUsageRouter() {
        this(TieBreak.ROUND_ROBIN);
    }

    @Override
    public int route(RoutedRequest request, RoutingTarget[] replicas) {
        int n = replicas.length;
        double[] usage = reads.kvUsage(replicas);
        int[] loads = reads.loads(replicas);
        int best = 0;
        for (int i = 1; i < n; i++) {
            int byUsage = Double.compare(usage[i], usage[best]);
            if (byUsage < 0 || (byUsage == 0 && loads[i] < loads[best])) {
                best = i;
            }
        }
        ties.reset(n);
        for (int i = 0; i < n; i++) {
            if (Double.compare(usage[i], usage[best]) == 0 && loads[i] == loads[best]) {
                ties.tie(i);
            }
        }
        return ties.pick();
    }
}
