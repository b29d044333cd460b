package dev.infersim.sim;

import dev.infersim.common.ConfigException;

import java.util.Locale;

/**
 * How a router chooses among replicas that score the same. {@link #ROUND_ROBIN}, the default, takes the first tied
 * replica after the one it chose last, as nginx's {@code least_conn} and HAProxy's {@code leastconn} do, so an idle
 * fleet shares out requests evenly; {@link #LOWEST_INDEX} takes the lowest index, as Vidur's routers do, which at low
 * load sends everything to replica 0.
 */
public enum TieBreak {
    ROUND_ROBIN("round-robin"),
    LOWEST_INDEX("lowest-index");

    private final String flagValue;

    TieBreak(String flagValue) {
        this.flagValue = flagValue;
    }

    public String flagValue() {
        return flagValue;
    }

    /** Parses {@code round-robin} or {@code lowest-index}, naming {@code flag} otherwise. */
    public static TieBreak parse(String flag, String value) {
        for (TieBreak t : values()) {
            if (t.flagValue.equals(value.toLowerCase(Locale.ROOT).replace('_', '-'))) {
                return t;
            }
        }
        throw new ConfigException(flag + ": expected round-robin or lowest-index, got '" + value + "'");
    }

    /**
     * Chooses among tied candidates for one router, remembering its past choices. Round robin is nginx's
     * ({@code ngx_http_upstream_get_least_conn_peer}: smooth weighted round robin over the tied peers, every weight 1):
     * each tied candidate's current weight grows by 1, the largest is chosen (the first on equals) and loses the number
     * tied. A router marks the tied candidates with {@link #tie} after {@link #reset}, then calls {@link #pick}. Not
     * thread-safe; allocates only when the fleet grows.
     */
    static final class Ties {
        private final TieBreak mode;
        private int[] currentWeight = new int[8];
        private boolean[] tied = new boolean[8];
        private int n;

        Ties(TieBreak mode) {
            this.mode = mode;
        }

        void reset(int candidates) {
            if (tied.length < candidates) {
                tied = new boolean[2 * candidates];
                currentWeight = java.util.Arrays.copyOf(currentWeight, 2 * candidates);
            }
            java.util.Arrays.fill(tied, 0, candidates, false);
            n = candidates;
        }

        void tie(int i) {
            tied[i] = true;
        }

        /** The chosen candidate's index. */
        int pick() {
            int best = -1;
            int total = 0;
            for (int i = 0; i < n; i++) {
                if (!tied[i]) {
                    continue;
                }
                if (mode == LOWEST_INDEX) {
                    return i;
                }
                currentWeight[i]++;
                total++;
                if (best < 0 || currentWeight[i] > currentWeight[best]) {
                    best = i;
                }
            }
            currentWeight[best] -= total;
            return best;
        }
    }
}
