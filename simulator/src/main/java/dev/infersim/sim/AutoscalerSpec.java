package dev.infersim.sim;

import dev.infersim.common.ConfigException;

/**
 * What an autoscaler is asked to do, in the terms of an {@code autoscaling/v2} HorizontalPodAutoscaler with one Pods
 * metric and an {@code AverageValue} target.
 *
 * @param metric          the per-replica metric ({@code --autoscale-metric})
 * @param target          its desired average over replicas ({@code --autoscale-target}), > 0
 * @param minReplicas     {@code --min-replicas}, >= 1
 * @param maxReplicas     {@code --max-replicas}, >= minReplicas
 * @param syncPeriodNanos {@code --sync-period} (kube-controller-manager's
 *                        {@code --horizontal-pod-autoscaler-sync-period}, 15 s by default)
 * @param tolerance       ratios within 1 +- tolerance cause no scaling ({@code --horizontal-pod-autoscaler-tolerance},
 *                        0.1 by default)
 * @param scaleUp         {@code behavior.scaleUp}
 * @param scaleDown       {@code behavior.scaleDown}
 */
public record AutoscalerSpec(AutoscaleMetric metric, double target, int minReplicas, int maxReplicas,
                             long syncPeriodNanos, double tolerance, HpaScalingRules scaleUp,
                             HpaScalingRules scaleDown) {

    public static final long DEFAULT_SYNC_PERIOD_NANOS = 15_000_000_000L;
    public static final double DEFAULT_TOLERANCE = 0.1;

    public AutoscalerSpec {
        ConfigException.check(target > 0 && Double.isFinite(target), "--autoscale-target must be > 0, got %s", target);
        ConfigException.check(minReplicas >= 1, "--min-replicas must be >= 1, got %d", minReplicas);
        ConfigException.check(maxReplicas >= minReplicas, "--max-replicas (%d) must be >= --min-replicas (%d)",
                maxReplicas, minReplicas);
        ConfigException.check(syncPeriodNanos > 0, "--sync-period must be > 0 s, got %s s", syncPeriodNanos / 1e9);
        ConfigException.check(tolerance >= 0 && tolerance < 1, "--tolerance must be in [0, 1), got %s", tolerance);
    }

    /** Kubernetes' defaults for everything but the metric, target and bounds. */
    public static AutoscalerSpec of(AutoscaleMetric metric, double target, int minReplicas, int maxReplicas) {
        return new AutoscalerSpec(metric, target, minReplicas, maxReplicas, DEFAULT_SYNC_PERIOD_NANOS, DEFAULT_TOLERANCE,
                HpaScalingRules.defaultScaleUp(), HpaScalingRules.defaultScaleDown());
    }

    public AutoscalerSpec withSyncPeriodNanos(long nanos) {
        return new AutoscalerSpec(metric, target, minReplicas, maxReplicas, nanos, tolerance, scaleUp, scaleDown);
    }

    public AutoscalerSpec withTolerance(double t) {
        return new AutoscalerSpec(metric, target, minReplicas, maxReplicas, syncPeriodNanos, t, scaleUp, scaleDown);
    }

    public AutoscalerSpec withScaleUp(HpaScalingRules rules) {
        return new AutoscalerSpec(metric, target, minReplicas, maxReplicas, syncPeriodNanos, tolerance, rules, scaleDown);
    }

    public AutoscalerSpec withScaleDown(HpaScalingRules rules) {
        return new AutoscalerSpec(metric, target, minReplicas, maxReplicas, syncPeriodNanos, tolerance, scaleUp, rules);
    }
}
