package dev.infersim.server.observe;

import dev.infersim.server.json.PyFloat;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * vLLM's {@code vllm:lora_requests_info} gauge, which gateways such as the Gateway API Inference Extension read for LoRA
 * affinity. Its labels are {@code max_lora}, {@code waiting_lora_adapters} and {@code running_lora_adapters}
 * (comma-joined adapter names); the value is the Unix time the label set was last current
 * ({@code set_to_current_time()}), every label combination seen stays a series, and a reader takes the newest. One per
 * server, shared by its data-parallel engines. Two ways to fill the two lists:
 * <ul>
 *   <li>Current vLLM ({@code vllm-project/vllm@9aaf83ef5}: {@code vllm/v1/metrics/stats.py} {@code LoRARequestStates},
 *       {@code vllm/v1/metrics/loggers.py} {@code PrometheusStatLogger.record}, since PR #26801 of 2025-11-10): every
 *       adapter with an unfinished request is a key of both the waiting and the running dict (its count there may be
 *       0), and the logger joins the keys, so both labels list the same adapters, in the order they gained their first
 *       unfinished request (an adapter leaves when its last request finishes and goes to the end when it comes back).
 *       The default.</li>
 *   <li>{@code byQueue}: vLLM before that change ({@code @a98cc35c3}, {@code update_iteration_stats}) and
 *       llm-d-inference-sim: {@code waiting_lora_adapters} names the adapters with a request in the scheduler's
 *       waiting queue (not yet scheduled, or preempted), {@code running_lora_adapters} those with a request in its
 *       running list, both in the order the adapters were first ever seen.</li>
 * </ul>
 */
public final class LoraRequestStates {
    private final int maxLoras;
    private final boolean byQueue;
    private final int engines;
    private final LongSupplier epochMillis;
    /** Unfinished requests per adapter name, in the order of their first unfinished request; none at 0. */
    private final Map<String, int[]> unfinished = new LinkedHashMap<>();
    /** byQueue: every adapter ever seen, first seen first. */
    private final Set<String> seen = new LinkedHashSet<>();
    /**
     * byQueue: per adapter, its requests in each engine's running list after that engine's last step (index e) and
     * the step before (index engines + e).
     */
    private final Map<String, int[]> running = new HashMap<>();
    /** Label values -> the Unix seconds they were last current. */
    private final Map<String, Double> series = new LinkedHashMap<>();
    private String current;

    /**
     * @param byQueue the lists from the scheduler's queues (vLLM before PR #26801), else both from the unfinished requests
     * @param engines the server's data-parallel engines
     */
    public LoraRequestStates(int maxLoras, boolean byQueue, int engines, LongSupplier epochMillis) {
        this.maxLoras = maxLoras;
        this.byQueue = byQueue;
        this.engines = engines;
        this.epochMillis = epochMillis;
        record();
    }

    public synchronized void arrived(String adapter) {
        seen.add(adapter);
        if (unfinished.computeIfAbsent(adapter, k -> new int[1])[0]++ == 0) {
            record();
        }
    }

    public synchronized void finished(String adapter) {
        int[] n = unfinished.get(adapter);
        if (n != null && --n[0] == 0) {
            unfinished.remove(adapter);
            record();
        }
    }

    /**
     * Engine thread, after each step is planned: the adapters of the requests in {@code engine}'s running list
     * ({@code adapters[0, count)}, one entry per request, null for the base model). Only the queue-based lists use it.
     */
    public synchronized void runningNow(int engine, String[] adapters, int count) {
        if (!byQueue) {
            return;
        }
        for (int[] counts : running.values()) {
            counts[engines + engine] = counts[engine]; // the count after the last step
            counts[engine] = 0;
        }
        for (int i = 0; i < count; i++) {
            if (adapters[i] != null) {
                running.computeIfAbsent(adapters[i], k -> new int[2 * engines])[engine]++;
            }
        }
        for (int[] counts : running.values()) {
            if (counts[engine] != counts[engines + engine]) {
                record();
                return;
            }
        }
    }

    /** Whether the lists follow the scheduler's queues ({@link #runningNow} is needed). */
    public boolean byQueue() {
        return byQueue;
    }

    /** Appends the gauge's family; the current combination is stamped now, as a step would stamp it. */
    public synchronized void render(StringBuilder b) {
        series.put(current, nowSeconds());
        b.append("# HELP vllm:lora_requests_info Running stats on lora requests.\n")
                .append("# TYPE vllm:lora_requests_info gauge\n");
        for (Map.Entry<String, Double> e : series.entrySet()) {
            b.append("vllm:lora_requests_info{").append(e.getKey()).append("} ").append(goFloat(e.getValue())).append('\n');
        }
    }

    private void record() {
        String waiting;
        String runningNames;
        if (byQueue) {
            StringBuilder w = new StringBuilder();
            StringBuilder r = new StringBuilder();
            for (String adapter : seen) {
                int total = unfinished.containsKey(adapter) ? unfinished.get(adapter)[0] : 0;
                int[] counts = running.get(adapter);
                int run = 0;
                for (int e = 0; counts != null && e < engines; e++) {
                    run += counts[e];
                }
                run = Math.min(run, total); // a request that finished since its engine's last step runs no more
                if (run > 0) {
                    r.append(r.length() > 0 ? "," : "").append(adapter);
                }
                if (total > run) {
                    w.append(w.length() > 0 ? "," : "").append(adapter);
                }
            }
            waiting = w.toString();
            runningNames = r.toString();
        } else {
            waiting = String.join(",", unfinished.keySet());
            runningNames = waiting;
        }
        // prometheus_client writes labels in the order the gauge declares them
        String labels = "max_lora=\"" + maxLoras + "\",waiting_lora_adapters=\"" + escape(waiting)
                + "\",running_lora_adapters=\"" + escape(runningNames) + "\"";
        if (!labels.equals(current)) {
            current = labels;
            series.put(current, nowSeconds());
        }
    }

    private double nowSeconds() {
        return epochMillis.getAsLong() / 1000.0;
    }

    private static String escape(CharSequence v) {
        return v.toString().replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /** prometheus_client's floatToGoString: Python's repr, switching to an exponent from seven integer digits. */
    public static String goFloat(double d) {
        String s = PyFloat.repr(d);
        int dot = s.indexOf('.');
        if (d > 0 && dot > 6 && !s.contains("e")) {
            String mantissa = (s.charAt(0) + "." + s.substring(1, dot) + s.substring(dot + 1)).replaceAll("[0.]+$", "");
            return mantissa + "e+0" + (dot - 1);
        }
        return s;
    }
}
