package dev.infersim.server;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * vLLM's {@code vllm:lora_requests_info} gauge ({@code vllm/v1/metrics/loggers.py} with {@code LoRARequestStates} of
 * {@code vllm/v1/metrics/stats.py}), which gateways such as the Gateway API Inference Extension read for LoRA affinity.
 * vLLM tracks every adapter with an unfinished request and, since its LoRA stats moved into the scheduler stats, writes
 * each tracked adapter into both {@code running_lora_adapters} and {@code waiting_lora_adapters} (the keys of one
 * dict each, zero counts included; the Extension's LoRA scorer notes that both "share the same source in current
 * vLLM"). So do these labels: the adapters with a request waiting or running, comma-joined in the order first seen,
 * beside {@code max_lora}. Each time the set changes, its series is set to the current Unix time, as vLLM's
 * {@code set_to_current_time()} does every step; every label combination seen stays, as in vLLM's Prometheus client,
 * and the newest value marks the current one. One per server, shared by its data-parallel engines.
 */
final class LoraRequestStates {
    private final int maxLoras;
    private final LongSupplier epochMillis;
    /** Unfinished requests per adapter name; an adapter leaves when it has none. */
    private final Map<String, int[]> unfinished = new LinkedHashMap<>();
    /** Label values -> the Unix seconds they were last current. */
    private final Map<String, Double> series = new LinkedHashMap<>();
    private String current;

    LoraRequestStates(int maxLoras, LongSupplier epochMillis) {
        this.maxLoras = maxLoras;
        this.epochMillis = epochMillis;
        record();
    }

    synchronized void arrived(String adapter) {
        if (unfinished.computeIfAbsent(adapter, k -> new int[1])[0]++ == 0) {
            record();
        }
    }

    synchronized void finished(String adapter) {
        int[] n = unfinished.get(adapter);
        if (n != null && --n[0] == 0) {
            unfinished.remove(adapter);
            record();
        }
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
        String adapters = escape(String.join(",", unfinished.keySet()));
        // prometheus_client writes labels in the order the gauge declares them
        current = "max_lora=\"" + maxLoras + "\",waiting_lora_adapters=\"" + adapters + "\",running_lora_adapters=\""
                + adapters + "\"";
        series.put(current, nowSeconds());
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
