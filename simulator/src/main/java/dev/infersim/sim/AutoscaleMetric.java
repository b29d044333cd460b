package dev.infersim.sim;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.EngineCore;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * A per-replica vLLM gauge an autoscaler can target, with its {@code /metrics} name: what a Prometheus adapter or
 * KEDA's Prometheus trigger hands the Kubernetes HPA as a Pods metric with an {@code AverageValue} target.
 */
public enum AutoscaleMetric {
    NUM_REQUESTS_WAITING("num_requests_waiting", "vllm:num_requests_waiting"),
    NUM_REQUESTS_RUNNING("num_requests_running", "vllm:num_requests_running"),
    /** A fraction in [0, 1] despite the name, as vLLM exports it. */
    KV_CACHE_USAGE_PERC("kv_cache_usage_perc", "vllm:kv_cache_usage_perc");

    private final String flagName;
    private final String prometheusName;

    AutoscaleMetric(String flagName, String prometheusName) {
        this.flagName = flagName;
        this.prometheusName = prometheusName;
    }

    /** The name {@code --autoscale-metric} takes. */
    public String flagName() { return flagName; }

    /** The series name on a vLLM {@code /metrics} page. */
    public String prometheusName() { return prometheusName; }

    /** The gauge's value for an engine now, as its {@code /metrics} would show it. */
    public double read(EngineCore engine) {
        return switch (this) {
            case NUM_REQUESTS_WAITING -> engine.waitingCount();
            case NUM_REQUESTS_RUNNING -> engine.runningCount();
            case KV_CACHE_USAGE_PERC -> engine.kvCacheUsage();
        };
    }

    public static AutoscaleMetric byName(String name) {
        String n = name.toLowerCase(Locale.ROOT).replaceFirst("^vllm:", "");
        for (AutoscaleMetric m : values()) {
            if (m.flagName.equals(n)) {
                return m;
            }
        }
        throw new ConfigException("--autoscale-metric: unknown metric '" + name + "'; use "
                + Arrays.stream(values()).map(AutoscaleMetric::flagName).collect(Collectors.joining(", ")));
    }
}
