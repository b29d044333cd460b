package dev.infersim.sim;

import java.util.Arrays;

/**
 * One routing decision's reading of the replicas' live signals, each signal of each replica read exactly once into an
 * array the router then ranks and ties from. At a live front door a replica's KV-cache usage changes on its engine
 * thread while the router runs, so a router that read it twice, once to find the best score and again to find who
 * ties with it, could find nobody tied (issue 38: {@code ArrayIndexOutOfBoundsException: Index -1} in
 * {@link TieBreak.Ties#pick}). Reading once makes the decision a function of one snapshot. Allocates only when the
 * fleet grows; not thread-safe, one per router.
 */
final class SignalReads {
    private int[] loads = new int[8];
    private double[] kvUsage = new double[8];
    private int[] ints = new int[8];

    /**
     * Every replica's {@link RoutingTarget#load()}, read once, in {@code [0, replicas.length)}; a negative count (a
     * counter that went wrong) reads as 0, which keeps the prefix router's load bound above some replica's load.
     */
    int[] loads(RoutingTarget[] replicas) {
        if (loads.length < replicas.length) {
            loads = new int[2 * replicas.length];
        }
        for (int i = 0; i < replicas.length; i++) {
            loads[i] = Math.max(0, replicas[i].load());
        }
        return loads;
    }

    /**
     * Every replica's {@link RoutingTarget#kvCacheUsage()}, read once. A NaN (a replica that cannot say) reads as full,
     * 1.0, so it ranks last instead of comparing unequal to everything.
     */
    double[] kvUsage(RoutingTarget[] replicas) {
        if (kvUsage.length < replicas.length) {
            kvUsage = new double[2 * replicas.length];
        }
        for (int i = 0; i < replicas.length; i++) {
            double u = replicas[i].kvCacheUsage();
            kvUsage[i] = Double.isNaN(u) ? 1.0 : u;
        }
        return kvUsage;
    }

    /** A scratch array of at least {@code n} ints for a router's own per-replica score (its contents are stale). */
    int[] scratch(int n) {
        if (ints.length < n) {
            ints = Arrays.copyOf(ints, 2 * n);
        }
        return ints;
    }
}
