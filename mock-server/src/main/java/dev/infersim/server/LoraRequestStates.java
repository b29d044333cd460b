package dev.infersim.server;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * vLLM's {@code vllm:lora_requests_info} gauge ({@code vllm/v1/metrics/loggers.py}, {@code LoRARequestStates}), which
 * gateways such as the Gateway API Inference Extension read for LoRA affinity. Requests are counted per adapter as
 * waiting from arrival, running from their first scheduling, gone when finished. Each time the counts change, the
 * series labelled {@code running_lora_adapters} (the adapters with a running request, comma-joined in the order first
 * seen), {@code waiting_lora_adapters} (likewise for waiting) and {@code max_lora} is set to the current Unix time, as
 * vLLM's {@code set_to_current_time()} does every step; every label combination seen stays, as in vLLM's Prometheus
 * client, and the newest value marks the current one. One per server, shared by its data-parallel engines.
 */
final class LoraRequestStates {
    private final int maxLoras;
    private final LongSupplier epochMillis;
    /** Per adapter name: [waiting, running] request counts; an adapter leaves when both are 0. */
    private final Map<String, int[]> counts = new LinkedHashMap<>();
    /** Label values {running, waiting} -> the Unix seconds they were last current. */
    private final Map<String, Double> series = new LinkedHashMap<>();
    private String current;

    LoraRequestStates(int maxLoras, LongSupplier epochMillis) {
        this.maxLoras = maxLoras;
        this.epochMillis = epochMillis;
        record();
    }

    synchronized void waiting(String adapter) {
        counts.computeIfAbsent(adapter, k -> new int[2])[0]++;
        record();
    }

    synchronized void running(String adapter) {
        int[] c = counts.computeIfAbsent(adapter, k -> new int[2]);
        c[0] = Math.max(0, c[0] - 1);
        c[1]++;
        record();
    }

    synchronized void finished(String adapter, boolean wasRunning) {
        int[] c = counts.get(adapter);
        if (c == null) {
            return;
        }
        c[wasRunning ? 1 : 0] = Math.max(0, c[wasRunning ? 1 : 0] - 1);
        if (c[0] == 0 && c[1] == 0) {
            counts.remove(adapter);
        }
        record();
    }

    /** Appends the gauge's family; the current combination is stamped now, as a step would stamp it. */
    synchronized void render(StringBuilder b) {
        series.put(current, nowSeconds());
        b.append("# HELP vllm:lora_requests_info Running stats on lora requests.\n")
                .append("# TYPE vllm:lora_requests_info gauge\n");
        for (Map.Entry<String, Double> e : series.entrySet()) {
            b.append("vllm:lora_requests_info{").append(e.getKey()).append("} ").append(goFloat(e.getValue())).append('\n');
        }
    }

    private void record() {
        StringBuilder running = new StringBuilder();
        StringBuilder waiting = new StringBuilder();
        for (Map.Entry<String, int[]> e : counts.entrySet()) {
            join(running, e.getValue()[1], e.getKey());
            join(waiting, e.getValue()[0], e.getKey());
        }
        // prometheus_client writes labels in the order the gauge declares them
        current = "max_lora=\"" + maxLoras + "\",waiting_lora_adapters=\"" + escape(waiting) + "\",running_lora_adapters=\""
                + escape(running) + "\"";
        series.put(current, nowSeconds());
    }

    private static void join(StringBuilder b, int count, String name) {
        if (count > 0) {
            b.append(b.isEmpty() ? "" : ",").append(name);
        }
    }

    private double nowSeconds() {
        return epochMillis.getAsLong() / 1000.0;
    }

    private static String escape(CharSequence v) {
        return v.toString().replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /** prometheus_client's floatToGoString: Python's repr, switching to an exponent from seven integer digits. */
    static String goFloat(double d) {
        String s = PyFloat.repr(d);
        int dot = s.indexOf('.');
        if (d > 0 && dot > 6 && !s.contains("e")) {
            String mantissa = (s.charAt(0) + "." + s.substring(1, dot) + s.substring(dot + 1)).replaceAll("[0.]+$", "");
            return mantissa + "e+0" + (dot - 1);
        }
        return s;
    }
}
