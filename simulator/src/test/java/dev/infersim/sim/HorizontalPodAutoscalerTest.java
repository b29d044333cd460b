package dev.infersim.sim;

import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Decisions worked out by hand from the Kubernetes documentation's formulas and the controller's rules. */
class HorizontalPodAutoscalerTest {
    private static final long S = 1_000_000_000L;

    private static HorizontalPodAutoscaler hpa(double target, int min, int max) {
        return new HorizontalPodAutoscaler(AutoscalerSpec.of(AutoscaleMetric.NUM_REQUESTS_WAITING, target, min, max));
    }

    private static FleetObservation seen(int current, int withoutMetrics, double... values) {
        return new FleetObservation(current, values, withoutMetrics);
    }

    @Test
    void desiredIsCeilOfCurrentTimesMetricOverTarget() {
        // mean 5 / target 2.5 = 2; ceil(2 x 2) = 4, within the default scale-up limit max(2 x 2, 2 + 4) = 6
        assertEquals(4, hpa(2.5, 1, 10).sync(0, seen(2, 0, 6, 4)));
        // mean 1 / target 3 = 0.333; ceil(0.333 x 3) = 1; no history, so the 300 s window holds nothing higher
        assertEquals(1, hpa(3, 1, 10).sync(0, seen(3, 0, 1, 1, 1)));
        // 7 / 2 = 3.5 on one replica: ceil(3.5) = 4
        assertEquals(4, hpa(2, 1, 10).sync(0, seen(1, 0, 7)));
    }

    @Test
    void ratiosWithinTenPercentChangeNothing() {
        assertEquals(4, hpa(2.5, 1, 10).sync(0, seen(4, 0, 2.7, 2.75, 2.7, 2.75))); // 1.09
        assertEquals(4, hpa(2.5, 1, 10).sync(0, seen(4, 0, 2.25, 2.25, 2.25, 2.25))); // 0.90
        assertEquals(5, hpa(2.5, 1, 10).sync(0, seen(4, 0, 2.8, 2.8, 2.8, 2.8))); // 1.12: ceil(4.48)
        assertEquals(9, withTolerance(hpa(2.5, 1, 10), 0).sync(0, seen(8, 0, 2.8, 2.8, 2.8, 2.8, 2.8, 2.8, 2.8, 2.8)));
    }

    private static HorizontalPodAutoscaler withTolerance(HorizontalPodAutoscaler h, double t) {
        return new HorizontalPodAutoscaler(h.spec().withTolerance(t));
    }

    @Test
    void scaleUpIsLimitedToDoubleOrFourPodsPerFifteenSeconds() {
        HorizontalPodAutoscaler h = hpa(1, 1, 100);
        // ratio 25 asks for 50; the limit is max(ceil(2 x 2), 2 + 4) = 6
        assertEquals(6, h.sync(0, seen(2, 0, 25, 25)));
        // 5 s later the 4 pods added count against the period: it started at 2, so the limit is still 6
        assertEquals(6, h.sync(5 * S, seen(6, 4, 25, 25)));
        // 15 s after the first scale-up that event has left the period: from 6, max(12, 10) = 12
        double[] six = {25, 25, 25, 25, 25, 25};
        assertEquals(12, h.sync(15 * S, new FleetObservation(6, six, 0)));
    }

    @Test
    void everyDecisionSaysWhy() {
        HorizontalPodAutoscaler up = hpa(1, 1, 100);
        assertEquals(6, up.sync(0, seen(2, 0, 25, 25)));
        assertEquals("ratio 25.000: recommends 50, capped to 6 by the scale-up policy pods=4/15 (selectPolicy Max)",
                up.lastReason());
        HorizontalPodAutoscaler small = hpa(1, 1, 5);
        assertEquals(5, small.sync(0, seen(4, 0, 2, 2, 2, 2)));
        assertEquals("ratio 2.000: recommends 8, capped to 5 by --max-replicas", small.lastReason());
        HorizontalPodAutoscaler calm = hpa(2.5, 1, 10);
        assertEquals(4, calm.sync(0, seen(4, 0, 2.7, 2.75, 2.7, 2.75)));
        assertEquals("ratio 1.090 within the tolerance 0.1: held", calm.lastReason());
        HorizontalPodAutoscaler down = hpa(1, 1, 10);
        down.sync(0, seen(4, 0, 1, 1, 1, 1));
        assertEquals(4, down.sync(15 * S, seen(4, 0, 0, 0, 0, 0)));
        assertEquals("ratio 0.000: recommends 0, held at 4 by the scale-down stabilization window (300 s): held",
                down.lastReason());
        assertEquals(4, down.sync(30 * S, seen(4, 4)));
        assertEquals("no replica reported the metric: held", down.lastReason());
    }

    @Test
    void minSelectPolicyTakesTheSmallerScaleUp() {
        AutoscalerSpec spec = AutoscalerSpec.of(AutoscaleMetric.NUM_REQUESTS_WAITING, 1, 1, 100)
                .withScaleUp(HpaScalingRules.defaultScaleUp().withSelect("--scale-up-select", "Min"));
        double[] ten = new double[10];
        java.util.Arrays.fill(ten, 5);
        // proposals 20 (100 %) and 14 (4 pods): Min takes 14
        assertEquals(14, new HorizontalPodAutoscaler(spec).sync(0, new FleetObservation(10, ten, 0)));
        AutoscalerSpec disabled = spec.withScaleUp(HpaScalingRules.defaultScaleUp().withSelect("--scale-up-select", "disabled"));
        assertEquals(10, new HorizontalPodAutoscaler(disabled).sync(0, new FleetObservation(10, ten, 0)));
    }

    @Test
    void scaleDownWaitsForTheHighestRecommendationToLeaveTheFiveMinuteWindow() {
        HorizontalPodAutoscaler h = hpa(1, 1, 10);
        assertEquals(4, h.sync(0, seen(4, 0, 1, 1, 1, 1))); // at target: recommendation 4 stored at t = 0
        for (long t = 15; t < 300; t += 15) {
            assertEquals(4, h.sync(t * S, seen(4, 0, 0, 0, 0, 0)), "t=" + t); // asks for 0, held at 4
        }
        // at 300 s the t = 0 recommendation is no longer strictly inside the window; every later one asked for 0,
        // and the bound is min-replicas 1
        assertEquals(1, h.sync(300 * S, seen(4, 0, 0, 0, 0, 0)));
    }

    @Test
    void podsPolicyRemovesOneReplicaPerPeriod() {
        AutoscalerSpec spec = AutoscalerSpec.of(AutoscaleMetric.NUM_REQUESTS_WAITING, 1, 1, 10)
                .withScaleDown(HpaScalingRules.defaultScaleDown().withWindowNanos(0)
                        .withPolicies("--scale-down-policy", List.of("pods=1/60")));
        HorizontalPodAutoscaler h = new HorizontalPodAutoscaler(spec);
        assertEquals(4, h.sync(0, seen(5, 0, 0, 0, 0, 0, 0)));
        assertEquals(4, h.sync(15 * S, seen(4, 0, 0, 0, 0, 0)), "one removed within the last 60 s already");
        assertEquals(4, h.sync(45 * S, seen(4, 0, 0, 0, 0, 0)));
        assertEquals(3, h.sync(60 * S, seen(4, 0, 0, 0, 0, 0)), "the t = 0 event left the 60 s period");
        // percent: 100 % allows (int) (4 x 0) = 0, so only min-replicas bounds it
        HorizontalPodAutoscaler fast = hpa(1, 2, 10);
        assertEquals(2, new HorizontalPodAutoscaler(fast.spec().withScaleDown(HpaScalingRules.defaultScaleDown().withWindowNanos(0)))
                .sync(0, seen(4, 0, 0, 0, 0, 0)));
    }

    @Test
    void replicasWithoutMetricsDampenAScaleUpAsIfIdle() {
        // 2 reporting at mean 10 (ratio 2); 2 starting count as 0: 20 / 4 / 5 = 1.0, within tolerance: no change
        assertEquals(4, hpa(5, 1, 10).sync(0, seen(4, 2, 10, 10)));
        // mean 20 (ratio 4); with the starting pair as 0: 40 / 4 / 5 = 2, ceil(2 x 4) = 8
        assertEquals(8, hpa(5, 1, 10).sync(0, seen(4, 2, 20, 20)));
    }

    @Test
    void replicasWithoutMetricsDampenAScaleDownAsIfAtTarget() {
        // 2 reporting at 1 (ratio 0.2); the 2 others count as the target 5: (2 + 10) / 4 / 5 = 0.6, ceil(2.4) = 3
        assertEquals(3, hpa(5, 1, 10).sync(0, seen(4, 2, 1, 1)));
        // (8 + 10) / 4 / 5 = 0.9: within tolerance after the correction, so no change although 0.8 alone was not
        assertEquals(4, hpa(5, 1, 10).sync(0, seen(4, 2, 4, 4)));
    }

    @Test
    void noMetricAtAllKeepsTheCount() {
        assertEquals(3, hpa(5, 1, 10).sync(0, seen(3, 3)));
    }

    @Test
    void aFleetOutsideTheBoundsIsBroughtToTheNearerOne() {
        assertEquals(10, hpa(5, 2, 10).sync(0, seen(12, 0, 100)));
        assertEquals(2, hpa(5, 2, 10).sync(0, seen(1, 0, 0)));
        // the metric's wish is clamped too: ratio 20 on 8 replicas is limited to max 10
        double[] eight = {100, 100, 100, 100, 100, 100, 100, 100};
        assertEquals(10, hpa(5, 1, 10).sync(0, new FleetObservation(8, eight, 0)));
    }

    @Test
    void badSettingsAreRefusedNamingTheFlag() {
        assertTrue(assertThrows(ConfigException.class, () -> hpa(0, 1, 4)).getMessage().startsWith("--autoscale-target"));
        assertTrue(assertThrows(ConfigException.class, () -> hpa(1, 3, 2)).getMessage().startsWith("--max-replicas"));
        assertTrue(assertThrows(ConfigException.class, () -> HpaScalingRules.Policy.parse("--scale-up-policy", "pods:4"))
                .getMessage().startsWith("--scale-up-policy"));
        assertEquals(new HpaScalingRules.Policy(true, 50, 30 * S), HpaScalingRules.Policy.parse("--x", "Percent=50/30"));
        assertTrue(assertThrows(ConfigException.class, () -> Autoscalers.byName("keda", AutoscalerSpec.of(
                AutoscaleMetric.KV_CACHE_USAGE_PERC, 0.8, 1, 2))).getMessage().startsWith("--autoscaler"));
        assertEquals(AutoscaleMetric.KV_CACHE_USAGE_PERC, AutoscaleMetric.byName("vllm:kv_cache_usage_perc"));
    }
}
