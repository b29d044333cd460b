package dev.infersim.sim;

import dev.infersim.engine.ConfigException;

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

    /** Chooses among tied candidates for one router, remembering its last choice. Not thread-safe. */
    static final class Ties {
        private final TieBreak mode;
        private int next;

        Ties(TieBreak mode) {
            this.mode = mode;
        }

        /** Where the scan for the first tied candidate of {@code n} starts. */
        int start(int n) {
            return mode == LOWEST_INDEX ? 0 : next % n;
        }

        /** Records the choice; returns it. */
        int chose(int i) {
            next = i + 1;
            return i;
        }
    }
}
