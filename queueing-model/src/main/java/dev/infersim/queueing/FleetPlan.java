package dev.infersim.queueing;

/**
 * How many replicas (and GPUs) serve a target request rate when each replica is loaded to at
 * most (1 - headroom) of its admissible rate, e.g. 80% of its SLO-limited rate for 20% headroom,
 * and what the output tokens then cost. Cost per million output tokens is
 * GPUs x $/GPU-hour / (output tokens per second x 3600) x 10^6, at the fleet's actual load.
 *
 * @param targetRatePerS request rate the fleet must carry
 * @param replicaMaxRatePerS admissible rate of one replica, e.g. from {@link CapacityPlanner}
 * @param headroomFraction spare capacity kept on each replica, in [0, 1)
 * @param gpusPerReplica GPUs one replica occupies (tensor-parallel size times pipeline stages)
 * @param replicas replicas in the fleet; enough to carry the target within the headroom
 */
public record FleetPlan(double targetRatePerS, double replicaMaxRatePerS, double headroomFraction,
        int gpusPerReplica, int replicas) {

    /** Lets a target that is an exact multiple of the usable rate round down despite float error. */
    private static final double ROUNDING = 1e-9;

    public FleetPlan {
        Checks.positive("targetRatePerS", targetRatePerS);
        Checks.positive("replicaMaxRatePerS", replicaMaxRatePerS);
        if (!(headroomFraction >= 0 && headroomFraction < 1)) {
            throw new IllegalArgumentException("headroomFraction must be in [0, 1), got " + headroomFraction);
        }
        Checks.positive("gpusPerReplica", gpusPerReplica);
        Checks.positive("replicas", replicas);
        if (replicas < requiredReplicas(targetRatePerS, replicaMaxRatePerS, headroomFraction)) {
            throw new IllegalArgumentException("replicas " + replicas + " cannot carry targetRatePerS " + targetRatePerS
                    + " at " + replicaMaxRatePerS + "/s each with headroom " + headroomFraction);
        }
    }

    /** The smallest fleet for the target: ceil(target / (replicaMax (1 - headroom))) replicas. */
    public static FleetPlan forTargetRate(double targetRatePerS, double replicaMaxRatePerS, double headroomFraction,
            int gpusPerReplica) {
        return new FleetPlan(targetRatePerS, replicaMaxRatePerS, headroomFraction, gpusPerReplica,
                requiredReplicas(targetRatePerS, replicaMaxRatePerS, headroomFraction));
    }

    public int gpus() {
        return replicas * gpusPerReplica;
    }

    /** The rate each replica carries when the target is spread evenly. */
    public double ratePerReplicaPerS() {
        return targetRatePerS / replicas;
    }

    /** Cost of the whole fleet's output at the target rate, dollars per million output tokens. */
    public double dollarsPerMillionOutputTokens(double dollarsPerGpuHour, double meanOutputTokens) {
        return dollarsPerMillionOutputTokens(dollarsPerGpuHour, gpus(),
                targetRatePerS * Checks.positive("meanOutputTokens", meanOutputTokens));
    }

    /** GPUs x $/GPU-hour / (output tokens per second x 3600) x 10^6. */
    public static double dollarsPerMillionOutputTokens(double dollarsPerGpuHour, int gpus, double outputTokensPerS) {
        Checks.nonNegative("dollarsPerGpuHour", dollarsPerGpuHour);
        Checks.positive("gpus", gpus);
        Checks.positive("outputTokensPerS", outputTokensPerS);
        return dollarsPerGpuHour * gpus / (outputTokensPerS * 3600) * 1e6;
    }

    private static int requiredReplicas(double targetRatePerS, double replicaMaxRatePerS, double headroomFraction) {
        double usablePerReplica = replicaMaxRatePerS * (1 - headroomFraction);
        return (int) Math.max(1, Math.ceil(targetRatePerS / usablePerReplica - ROUNDING));
    }
}
