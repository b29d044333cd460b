package dev.infersim.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * The Kubernetes HorizontalPodAutoscaler's control loop for one Pods metric with an {@code AverageValue} target, as
 * documented ("Horizontal Pod Autoscaling", Algorithm details and Configurable scaling behavior, kubernetes.io) and
 * implemented in kube-controller-manager ({@code pkg/controller/podautoscaler}: {@code replica_calculator.go}
 * {@code calcPlainMetricReplicas}, {@code horizontal.go} {@code normalizeDesiredReplicasWithBehaviors}). Each sync:
 * <ol>
 *   <li>If the fleet is outside [min, max], it is set to the nearer bound.</li>
 *   <li>ratio = mean(metric over replicas that reported it) / target; within 1 +- tolerance nothing changes; else
 *       desired = ceil(ratio x reporting replicas). Replicas without a metric (a starting vLLM pod answers no scrape)
 *       are then counted as 0 on a scale-up and as exactly the target on a scale-down, and the ratio is recomputed;
 *       if that reverses the direction or falls within the tolerance, nothing changes. With no metric at all the
 *       controller cannot compute and keeps the count.</li>
 *   <li>Stabilization: the result is held between the lowest recommendation of the scale-up window and the highest of
 *       the scale-down window (both including this one; recommendations are stored before this step).</li>
 *   <li>Rate limits: each policy allows, from the count at the start of its period (now minus the changes made within
 *       it), {@code +value} pods or {@code x(1 + value/100)} rounded up on the way up, {@code -value} pods or
 *       {@code x(1 - value/100)} rounded down on the way down; {@code selectPolicy} Max takes the most permissive
 *       policy, Min the least, Disabled forbids the direction. The result is clamped to [min, max].</li>
 * </ol>
 * Time comes in as an argument; the history (recommendations, scale events) is kept here, one instance per fleet.
 * A pod's metric is averaged in double precision, where the controller averages milli-units as integers.
 */
public final class HorizontalPodAutoscaler implements Autoscaler {
    private final AutoscalerSpec spec;
    private final List<long[]> recommendations = new ArrayList<>(); // {timeNanos, replicas}
    private final List<long[]> scaleUpEvents = new ArrayList<>(); // {timeNanos, replicas added}
    private final List<long[]> scaleDownEvents = new ArrayList<>(); // {timeNanos, replicas removed}
    /** Why the last sync decided as it did; the parts are set as the sync goes. */
    private String reason = "";
    private String metricReason;
    private String limitingPolicy;
    private int stabilized;

    public HorizontalPodAutoscaler(AutoscalerSpec spec) {
        this.spec = spec;
    }

    @Override
    public AutoscaleMetric metric() {
        return spec.metric();
    }

    @Override
    public long syncPeriodNanos() {
        return spec.syncPeriodNanos();
    }

    public AutoscalerSpec spec() {
        return spec;
    }

    @Override
    public String lastReason() {
        return reason;
    }

    @Override
    public int sync(long nowNanos, FleetObservation observation) {
        int current = observation.currentReplicas();
        int desired;
        if (current > spec.maxReplicas()) {
            desired = spec.maxReplicas();
            reason = current + " replicas above --max-replicas " + desired;
        } else if (current < spec.minReplicas()) {
            desired = spec.minReplicas();
            reason = current + " replicas below --min-replicas " + desired;
        } else {
            int fromMetric = replicasForMetric(observation);
            if (fromMetric < 0) {
                reason = "no replica reported the metric: held";
                return current; // no metric: the controller reports an error and leaves the scale alone
            }
            limitingPolicy = null;
            desired = normalize(nowNanos, current, fromMetric);
            reason = metricReason + explainNormalized(current, fromMetric, desired);
        }
        if (desired != current) {
            (desired > current ? scaleUpEvents : scaleDownEvents).add(new long[] {nowNanos, Math.abs(desired - current)});
        }
        return desired;
    }

    /** {@code calcPlainMetricReplicas}: the count the metric asks for, before behaviors; -1 without any metric. */
    int replicasForMetric(FleetObservation o) {
        double[] values = o.metricValues();
        if (values.length == 0) {
            return -1;
        }
        double sum = 0;
        for (double v : values) {
            sum += v;
        }
        double ratio = sum / values.length / spec.target();
        int current = o.currentReplicas();
        int missing = o.withoutMetrics();
        metricReason = String.format(java.util.Locale.ROOT, "ratio %.3f", ratio);
        if (missing == 0) {
            if (withinTolerance(ratio)) {
                metricReason += " within the tolerance " + spec.tolerance();
                return current;
            }
            return (int) Math.ceil(ratio * values.length);
        }
        double assumed = ratio < 1 ? spec.target() : 0;
        int counted = values.length + missing;
        double newRatio = (sum + assumed * missing) / counted / spec.target();
        metricReason += String.format(java.util.Locale.ROOT, ", %.3f with the %d replicas without a metric counted as %s",
                newRatio, missing, ratio < 1 ? "at the target" : "0");
        if (withinTolerance(newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1)) {
            metricReason += withinTolerance(newRatio) ? " (within the tolerance)" : " (the direction reverses)";
            return current;
        }
        int replicas = (int) Math.ceil(newRatio * counted);
        if ((newRatio < 1 && replicas > current) || (newRatio > 1 && replicas < current)) {
            metricReason += " (the direction reverses)";
            return current;
        }
        return replicas;
    }

    private boolean withinTolerance(double ratio) {
        return Math.abs(1 - ratio) <= spec.tolerance();
    }

    private static String title(HpaScalingRules.Select select) {
        String n = select.name();
        return n.charAt(0) + n.substring(1).toLowerCase(java.util.Locale.ROOT);
    }

    /** The behaviors' part of the reason: the recommendation, what the windows, the policies and the bounds made of it. */
    private String explainNormalized(int current, int recommended, int desired) {
        if (recommended == current) {
            return ": held";
        }
        StringBuilder b = new StringBuilder(": recommends " + recommended);
        if (stabilized != recommended) {
            b.append(", held at ").append(stabilized).append(" by the ")
                    .append(recommended < current ? "scale-down" : "scale-up").append(" stabilization window (")
                    .append((recommended < current ? spec.scaleDown() : spec.scaleUp()).stabilizationWindowNanos() / 1_000_000_000L)
                    .append(" s)");
        }
        if (desired != stabilized) {
            if (limitingPolicy != null) {
                b.append(", capped to ").append(desired).append(" by ").append(limitingPolicy);
            } else {
                b.append(", capped to ").append(desired).append(" by --").append(desired >= spec.maxReplicas() ? "max" : "min")
                        .append("-replicas");
            }
        }
        return b.append(desired == current ? ": held" : "").toString();
    }

    /** {@code normalizeDesiredReplicasWithBehaviors}: stabilization, then the policies' rate limits and the bounds. */
    private int normalize(long now, int current, int recommended) {
        stabilized = stabilize(now, current, recommended);
        if (stabilized > current) {
            int limit = Math.max(current, scaleUpLimit(now, current));
            if (limit >= spec.maxReplicas() || limit >= stabilized) {
                limitingPolicy = null;
            }
            return Math.min(stabilized, Math.min(spec.maxReplicas(), limit));
        }
        if (stabilized < current) {
            int limit = Math.min(current, scaleDownLimit(now, current));
            if (limit <= spec.minReplicas() || limit <= stabilized) {
                limitingPolicy = null;
            }
            return Math.max(stabilized, Math.max(spec.minReplicas(), limit));
        }
        return stabilized;
    }

    private int stabilize(long now, int current, int recommended) {
        long upCutoff = now - spec.scaleUp().stabilizationWindowNanos();
        long downCutoff = now - spec.scaleDown().stabilizationWindowNanos();
        int up = recommended;
        int down = recommended;
        for (long[] r : recommendations) {
            if (r[0] > upCutoff) {
                up = (int) Math.min(up, r[1]);
            }
            if (r[0] > downCutoff) {
                down = (int) Math.max(down, r[1]);
            }
        }
        recommendations.removeIf(r -> r[0] <= upCutoff && r[0] <= downCutoff);
        recommendations.add(new long[] {now, recommended});
        return Math.min(Math.max(current, up), down);
    }

    private int scaleUpLimit(long now, int current) {
        HpaScalingRules rules = spec.scaleUp();
        if (rules.select() == HpaScalingRules.Select.DISABLED) {
            limitingPolicy = "--scale-up-select Disabled";
            return current;
        }
        boolean max = rules.select() == HpaScalingRules.Select.MAX;
        int result = max ? Integer.MIN_VALUE : Integer.MAX_VALUE;
        for (HpaScalingRules.Policy p : rules.policies()) {
            int periodStart = current - changedWithin(now, p.periodNanos(), scaleUpEvents)
                    + changedWithin(now, p.periodNanos(), scaleDownEvents);
            int proposed = p.percent() ? (int) Math.ceil(periodStart * (1 + p.value() / 100.0)) : periodStart + p.value();
            if (max ? proposed > result : proposed < result) {
                result = proposed;
                limitingPolicy = "the scale-up policy " + p + " (selectPolicy " + title(rules.select()) + ")";
            }
        }
        return result;
    }

    private int scaleDownLimit(long now, int current) {
        HpaScalingRules rules = spec.scaleDown();
        if (rules.select() == HpaScalingRules.Select.DISABLED) {
            limitingPolicy = "--scale-down-select Disabled";
            return current;
        }
        boolean max = rules.select() == HpaScalingRules.Select.MAX;
        int result = max ? Integer.MAX_VALUE : Integer.MIN_VALUE;
        for (HpaScalingRules.Policy p : rules.policies()) {
            int periodStart = current - changedWithin(now, p.periodNanos(), scaleUpEvents)
                    + changedWithin(now, p.periodNanos(), scaleDownEvents);
            int proposed = p.percent() ? (int) (periodStart * (1 - p.value() / 100.0)) : periodStart - p.value();
            if (max ? proposed < result : proposed > result) {
                result = proposed;
                limitingPolicy = "the scale-down policy " + p + " (selectPolicy " + title(rules.select()) + ")";
            }
        }
        return result;
    }

    /** Replicas added (or removed) by the events strictly after {@code now - period}; older events are dropped. */
    private int changedWithin(long now, long periodNanos, List<long[]> events) {
        long longest = Math.max(spec.scaleUp().longestPeriodNanos(), spec.scaleDown().longestPeriodNanos());
        events.removeIf(e -> e[0] <= now - longest);
        long cutoff = now - periodNanos;
        int changed = 0;
        for (long[] e : events) {
            if (e[0] > cutoff) {
                changed += (int) e[1];
            }
        }
        return changed;
    }
}
