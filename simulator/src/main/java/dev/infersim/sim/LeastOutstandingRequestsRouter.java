package dev.infersim.sim;

/**
 * Sends each request to the replica with the fewest outstanding requests (running plus waiting; Vidur's "lor", nginx's
 * {@code least_conn}, HAProxy's {@code leastconn}); ties as {@link TieBreak} says (round robin among equals, as nginx
 * and HAProxy, by default). Each replica's load is read once per decision ({@link SignalReads}).
 */
public final class LeastOutstandingRequestsRouter implements Router {
    private final TieBreak.Ties ties;
    private final SignalReads reads = new SignalReads();

    public LeastOutstandingRequestsRouter(TieBreak tieBreak) {
        ties = new TieBreak.Ties(tieBreak);
    }

    /** Ties broken round robin. */
    public LeastOutstandingRequestsRouter() {
        this(TieBreak.ROUND_ROBIN);
    }

    @Override
    public int route(RoutedRequest request, RoutingTarget[] replicas) {
        int n = replicas.length;
        int[] loads = reads.loads(replicas);
        int bestLoad = Integer.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            bestLoad = Math.min(bestLoad, loads[i]);
        }
        ties.reset(n);
        for (int i = 0; i < n; i++) {
            if (loads[i] == bestLoad) {
                ties.tie(i);
            }
        }
        return ties.pick();
    }
}
