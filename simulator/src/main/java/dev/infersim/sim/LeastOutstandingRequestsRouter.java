package dev.infersim.sim;

/**
 * Sends each request to the replica with the fewest outstanding requests (running plus waiting; Vidur's "lor", nginx's
 * {@code least_conn}, HAProxy's {@code leastconn}); ties as {@link TieBreak} says (round robin among equals, as nginx
 * and HAProxy, by default).
 */
public final class LeastOutstandingRequestsRouter implements Router {
    private final TieBreak.Ties ties;

    public LeastOutstandingRequestsRouter(TieBreak tieBreak) {
        ties = new TieBreak.Ties(tieBreak);
    }

    /** Ties broken round robin. */
    public LeastOutstandingRequestsRouter() {
        this(TieBreak.ROUND_ROBIN);
    }

    @Override
    public int route(RoutedRequest request, RoutingTarget[] replicas) {
        int bestLoad = Integer.MAX_VALUE;
        for (RoutingTarget r : replicas) {
            bestLoad = Math.min(bestLoad, r.load());
        }
        ties.reset(replicas.length);
        for (int i = 0; i < replicas.length; i++) {
            if (replicas[i].load() == bestLoad) {
                ties.tie(i);
            }
        }
        return ties.pick();
    }
}
