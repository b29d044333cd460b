package dev.infersim.server.observe;

import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;

/**
 * The JVM and process metrics a real server exports beside its own, from Micrometer's Prometheus registry: JVM memory,
 * garbage collection, threads and classes (Micrometer's binders), and the {@code process_*} family
 * (CPU seconds, resident and virtual memory, open file descriptors, start time) under the names Python's
 * prometheus_client gives vLLM's (Micrometer's own processor binder is left out: its process_cpu_time_ns_total fails
 * promtool's unit lint and repeats process_cpu_seconds_total). One registry per process, shared by every server in
 * it, as they share the process.
 *
 * <p>vLLM's own series are not kept here: their names carry colons and one histogram is named {@code _total}, which
 * Micrometer's naming conventions would rewrite, so {@link ServerMetrics} renders them byte for byte by hand.
 */
public final class RuntimeMetrics {
    private static final PrometheusMeterRegistry REGISTRY = create();

    private RuntimeMetrics() {
    }

    private static PrometheusMeterRegistry create() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry); // listens to GC notifications for the life of the process
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        ProcessMetrics.builder().register(registry.getPrometheusRegistry());
        return registry;
    }

    /** The Prometheus text exposition (format 0.0.4) of the process's metrics. */
    public static String scrape() {
        return REGISTRY.scrape();
    }
}
