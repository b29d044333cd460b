package dev.infersim.cli.options;

import dev.infersim.common.ConfigException;
import dev.infersim.sim.AutoscaleMetric;
import dev.infersim.sim.Autoscaler;
import dev.infersim.sim.AutoscalerSpec;
import dev.infersim.sim.Autoscalers;
import dev.infersim.sim.HpaScalingRules;
import picocli.CommandLine.Option;

import java.util.List;

/**
 * The autoscaler flags shared by {@code simulate} and {@code autoscale}, named after the HorizontalPodAutoscaler's
 * spec and kube-controller-manager's flags, with Kubernetes' defaults.
 */
@OptionGroup.In(OptionGroup.FLEET)
public final class AutoscaleOptions {

    @Option(names = "--autoscale-metric", defaultValue = "num_requests_waiting",
            description = "Per-replica vLLM gauge to scale on: num_requests_waiting, num_requests_running or "
                    + "kv_cache_usage_perc (a fraction) (default: ${DEFAULT-VALUE}).")
    String metric;

    @Option(names = "--autoscale-target", paramLabel = "VALUE",
            description = "Desired average of the metric per replica (an HPA AverageValue target); required.")
    Double target;

    @Option(names = "--min-replicas", defaultValue = "1", description = "Fewest replicas (default: ${DEFAULT-VALUE}).")
    int minReplicas;

    @Option(names = "--max-replicas", description = "Most replicas; required.")
    Integer maxReplicas;

    @Option(names = "--sync-period", defaultValue = "15", paramLabel = "S",
            description = "Seconds between autoscaler runs, as --horizontal-pod-autoscaler-sync-period (default: ${DEFAULT-VALUE}).")
    double syncPeriodS;

    @Option(names = "--tolerance", defaultValue = "0.1",
            description = "No scaling while metric / target is within 1 +- this (default: ${DEFAULT-VALUE}).")
    double tolerance;

    @Option(names = "--scale-up-window", defaultValue = "0", paramLabel = "S",
            description = "behavior.scaleUp.stabilizationWindowSeconds (default: ${DEFAULT-VALUE}).")
    double scaleUpWindowS;

    @Option(names = "--scale-down-window", defaultValue = "300", paramLabel = "S",
            description = "behavior.scaleDown.stabilizationWindowSeconds (default: ${DEFAULT-VALUE}).")
    double scaleDownWindowS;

    @Option(names = "--scale-up-policy", paramLabel = "pods=N/S|percent=N/S",
            description = "A scale-up policy, repeatable (default: percent=100/15 and pods=4/15).")
    List<String> scaleUpPolicies = List.of();

    @Option(names = "--scale-down-policy", paramLabel = "pods=N/S|percent=N/S",
            description = "A scale-down policy, repeatable (default: percent=100/15).")
    List<String> scaleDownPolicies = List.of();

    @Option(names = "--scale-up-select", defaultValue = "Max",
            description = "selectPolicy for scaling up: Max, Min or Disabled (default: ${DEFAULT-VALUE}).")
    String scaleUpSelect;

    @Option(names = "--scale-down-select", defaultValue = "Max",
            description = "selectPolicy for scaling down: Max, Min or Disabled (default: ${DEFAULT-VALUE}).")
    String scaleDownSelect;

    /** The spec these flags describe. */
    public AutoscalerSpec spec() {
        ConfigException.check(target != null, "--autoscale-target is required with an autoscaler");
        ConfigException.check(maxReplicas != null, "--max-replicas is required with an autoscaler");
        ConfigException.check(syncPeriodS > 0 && Double.isFinite(syncPeriodS), "--sync-period must be > 0 s, got %s", syncPeriodS);
        checkWindow("--scale-up-window", scaleUpWindowS);
        checkWindow("--scale-down-window", scaleDownWindowS);
        HpaScalingRules up = HpaScalingRules.defaultScaleUp().withWindowNanos(nanos(scaleUpWindowS))
                .withPolicies("--scale-up-policy", scaleUpPolicies).withSelect("--scale-up-select", scaleUpSelect);
        HpaScalingRules down = HpaScalingRules.defaultScaleDown().withWindowNanos(nanos(scaleDownWindowS))
                .withPolicies("--scale-down-policy", scaleDownPolicies).withSelect("--scale-down-select", scaleDownSelect);
        return AutoscalerSpec.of(AutoscaleMetric.byName(metric), target, minReplicas, maxReplicas)
                .withSyncPeriodNanos(nanos(syncPeriodS)).withTolerance(tolerance).withScaleUp(up).withScaleDown(down);
    }

    /** A new autoscaler by {@code --autoscaler} name with these settings. */
    public Autoscaler autoscaler(String name) {
        return Autoscalers.byName(name, spec());
    }

    private static void checkWindow(String flag, double seconds) {
        ConfigException.check(seconds >= 0 && seconds <= 3600, "%s must be in [0, 3600] s, got %s", flag, seconds);
    }

    public static long nanos(double seconds) {
        return Math.round(seconds * 1e9);
    }
}
