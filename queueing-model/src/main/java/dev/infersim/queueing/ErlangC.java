package dev.infersim.queueing;

/**
 * Erlang's loss (B) and delay (C) formulas for c servers offered a = lambda / mu erlangs.
 * B is computed by the recursion B_0 = 1, B_k = a B_{k-1} / (k + a B_{k-1}), which never forms
 * a^c or c! and so stays accurate for thousands of servers; then
 * C = c B_c / (c - a (1 - B_c)). Source: Gross, Shortle, Thompson and Harris, Fundamentals of
 * Queueing Theory (4th ed., Wiley, 2008), M/M/c and Erlang's loss system; Kleinrock 1975, Vol. 1, ch. 3.
 */
public final class ErlangC {

    private ErlangC() {}

    /** Erlang B: the blocking probability of an M/M/c/c loss system. */
    public static double erlangB(int servers, double offeredLoadErlangs) {
        Checks.positive("servers", servers);
        Checks.nonNegative("offeredLoadErlangs", offeredLoadErlangs);
        double blocking = 1;
        for (int k = 1; k <= servers; k++) {
            blocking = offeredLoadErlangs * blocking / (k + offeredLoadErlangs * blocking);
        }
        return blocking;
    }

    /** Erlang C: the probability that an arrival to a stable M/M/c queue has to wait. */
    public static double probabilityOfWait(int servers, double offeredLoadErlangs) {
        if (offeredLoadErlangs >= servers) {
            throw new IllegalArgumentException("offeredLoadErlangs " + offeredLoadErlangs
                    + " must be below servers " + servers + " for a stable queue");
        }
        double blocking = erlangB(servers, offeredLoadErlangs);
        return servers * blocking / (servers - offeredLoadErlangs * (1 - blocking));
    }
}
