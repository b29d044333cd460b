/**
 * What the server reports about itself: vLLM's Prometheus series ({@link dev.infersim.server.observe.ServerMetrics},
 * its histograms, LoRA and KV-transfer gauges, {@code --fake-metrics}), the JVM's ({@link
 * dev.infersim.server.observe.RuntimeMetrics}), the truth log every finished choice is written to ({@link
 * dev.infersim.server.observe.TruthLog}) and the live dashboard. Written to by the engine and the routes; uses only
 * {@code json}.
 */
package dev.infersim.server.observe;
