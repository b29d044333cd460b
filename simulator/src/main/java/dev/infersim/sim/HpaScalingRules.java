package dev.infersim.sim;

import dev.infersim.common.ConfigException;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One direction of an HPA's {@code spec.behavior} ({@code autoscaling/v2} {@code HPAScalingRules}): a stabilization
 * window, rate-limiting policies and how to pick among them.
 *
 * @param stabilizationWindowNanos {@code stabilizationWindowSeconds}
 * @param policies                 {@code policies}, at least one unless {@code select} is DISABLED
 * @param select                   {@code selectPolicy}
 */
public record HpaScalingRules(long stabilizationWindowNanos, List<Policy> policies, Select select) {

    /** {@code selectPolicy}: the policy allowing the most change (Max), the least (Min), or no scaling this way. */
    public enum Select { MAX, MIN, DISABLED }

    /** {@code HPAScalingPolicy}: at most {@code value} pods, or {@code value} percent, per period. */
    public record Policy(boolean percent, int value, long periodNanos) {

        /** As the flag writes it: {@code pods=4/15} or {@code percent=100/15}. */
        @Override
        public String toString() {
            return (percent ? "percent=" : "pods=") + value + "/" + periodNanos / 1_000_000_000L;
        }
        public Policy {
            ConfigException.check(value > 0, "an HPA scaling policy needs a value > 0, got %d", value);
            ConfigException.check(periodNanos > 0 && periodNanos <= 1_800_000_000_000L,
                    "an HPA scaling policy period must be in (0, 1800] s, got %s s", periodNanos / 1e9);
        }

        /** Parses {@code pods=4/15} or {@code percent=100/15} (value / period in seconds), for {@code flag}. */
        public static Policy parse(String flag, String text) {
            String t = text.trim().toLowerCase(Locale.ROOT);
            int eq = t.indexOf('=');
            int slash = t.indexOf('/');
            ConfigException.check(eq > 0 && slash > eq, "%s: expected pods=N/PERIOD_S or percent=N/PERIOD_S, got '%s'",
                    flag, text);
            String type = t.substring(0, eq);
            ConfigException.check(type.equals("pods") || type.equals("percent"),
                    "%s: policy type must be pods or percent, got '%s'", flag, type);
            try {
                int value = Integer.parseInt(t.substring(eq + 1, slash));
                double period = Double.parseDouble(t.substring(slash + 1));
                ConfigException.check(value > 0 && period > 0 && period <= 1800,
                        "%s: needs a value > 0 and a period in (0, 1800] s, got '%s'", flag, text);
                return new Policy(type.equals("percent"), value, Math.round(period * 1e9));
            } catch (NumberFormatException e) {
                throw new ConfigException(flag + ": expected pods=N/PERIOD_S or percent=N/PERIOD_S, got '" + text + "'", e);
            }
        }
    }

    public HpaScalingRules {
        ConfigException.check(stabilizationWindowNanos >= 0 && stabilizationWindowNanos <= 3_600_000_000_000L,
                "an HPA stabilization window must be in [0, 3600] s, got %s s", stabilizationWindowNanos / 1e9);
        policies = List.copyOf(policies);
        ConfigException.check(select == Select.DISABLED || !policies.isEmpty(), "HPA scaling rules need a policy");
    }

    /** Kubernetes' default scale-up: no window; the larger of 100 % and 4 pods per 15 s. */
    public static HpaScalingRules defaultScaleUp() {
        return new HpaScalingRules(0, List.of(new Policy(true, 100, 15_000_000_000L), new Policy(false, 4, 15_000_000_000L)),
                Select.MAX);
    }

    /** Kubernetes' default scale-down: a 300 s window; 100 % per 15 s. */
    public static HpaScalingRules defaultScaleDown() {
        return new HpaScalingRules(300_000_000_000L, List.of(new Policy(true, 100, 15_000_000_000L)), Select.MAX);
    }

    /** These rules with another window. */
    public HpaScalingRules withWindowNanos(long nanos) {
        return new HpaScalingRules(nanos, policies, select);
    }

    /** These rules with other policies (the defaults stay when {@code texts} is empty). */
    public HpaScalingRules withPolicies(String flag, List<String> texts) {
        if (texts == null || texts.isEmpty()) {
            return this;
        }
        List<Policy> parsed = new ArrayList<>();
        for (String text : texts) {
            parsed.add(Policy.parse(flag, text));
        }
        return new HpaScalingRules(stabilizationWindowNanos, parsed, select);
    }

    /** These rules with another {@code selectPolicy} (Max, Min or Disabled). */
    public HpaScalingRules withSelect(String flag, String name) {
        Select s;
        try {
            s = Select.valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(flag + ": use Max, Min or Disabled, got '" + name + "'", e);
        }
        return new HpaScalingRules(stabilizationWindowNanos, policies, s);
    }

    long longestPeriodNanos() {
        long longest = 0;
        for (Policy p : policies) {
            longest = Math.max(longest, p.periodNanos());
        }
        return longest;
    }
}
