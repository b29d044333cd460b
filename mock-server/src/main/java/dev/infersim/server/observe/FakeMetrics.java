package dev.infersim.server.observe;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.json.Json;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * llm-d-inference-sim's {@code --fake-metrics JSON} ({@code llm-d/llm-d-inference-sim@eec055a},
 * {@code docs/configuration.md}, {@code pkg/common/config_fake_metrics.go}): fixed values /metrics reports instead of the
 * engine's, never mixed with them, so an endpoint picker's scorers can be tested deterministically. Keys as llm-d's:
 * {@code running-requests}, {@code waiting-requests}, {@code kv-cache-usage} (numbers; llm-d's generator functions are
 * not supported), {@code loras} ({@code [{"running": "a,b", "waiting": "c", "timestamp": 1257894567}]}: one
 * {@code vllm:lora_requests_info} series each), per-bucket counts {@code ttft-buckets-values},
 * {@code tpot-buckets-values} ({@code vllm:request_time_per_output_token_seconds}), {@code e2erl-buckets-values},
 * {@code queue-time-buckets-values}, {@code inf-time-buckets-values}, {@code prefill-time-buckets-values},
 * {@code decode-time-buckets-values} (missing trailing buckets are 0), samples {@code request-prompt-tokens},
 * {@code request-generation-tokens}, {@code request-params-max-tokens}, {@code request-max-generation-tokens}, counts
 * {@code request-success-total} (by finish reason), {@code total-prompt-tokens} and {@code total-generation-tokens}.
 */
public record FakeMetrics(Double running, Double waiting, Double kvCacheUsage, List<Lora> loras,
                          Map<String, long[]> bucketCounts, Map<String, long[]> samples, Map<String, Long> successes,
                          Long promptTokens, Long generationTokens) {

    /** One {@code vllm:lora_requests_info} series. */
    public record Lora(String running, String waiting, double timestamp) {
    }

    static final Set<String> BUCKET_KEYS = Set.of("ttft-buckets-values", "tpot-buckets-values", "e2erl-buckets-values",
            "queue-time-buckets-values", "inf-time-buckets-values", "prefill-time-buckets-values", "decode-time-buckets-values");
    static final Set<String> SAMPLE_KEYS = Set.of("request-prompt-tokens", "request-generation-tokens",
            "request-params-max-tokens", "request-max-generation-tokens");
    private static final Set<String> OTHER_KEYS = Set.of("running-requests", "waiting-requests", "kv-cache-usage", "loras",
            "request-success-total", "total-prompt-tokens", "total-generation-tokens");
    private static final Set<String> REASONS = Set.of("stop", "length", "abort", "error", "repetition");

    /** Parses the flag's JSON; throws IllegalArgumentException naming {@code --fake-metrics} and the key at fault. */
    public static FakeMetrics parse(String json) {
        JsonNode o;
        try {
            o = Json.MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("--fake-metrics is not JSON: " + e.getOriginalMessage());
        }
        if (o == null || !o.isObject()) {
            throw new IllegalArgumentException("--fake-metrics must be a JSON object, got " + json);
        }
        for (Iterator<String> names = o.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!BUCKET_KEYS.contains(name) && !SAMPLE_KEYS.contains(name) && !OTHER_KEYS.contains(name)) {
                throw new IllegalArgumentException("--fake-metrics " + name + ": unknown key");
            }
        }
        List<Lora> loras = new ArrayList<>();
        for (JsonNode l : o.path("loras")) {
            if (!l.path("timestamp").isNumber()) {
                throw new IllegalArgumentException("--fake-metrics loras: each needs running, waiting and a numeric timestamp");
            }
            loras.add(new Lora(l.path("running").asText(""), l.path("waiting").asText(""), l.path("timestamp").asDouble()));
        }
        Map<String, long[]> buckets = new LinkedHashMap<>();
        for (String key : BUCKET_KEYS) {
            if (o.has(key)) {
                buckets.put(key, longs(o, key));
            }
        }
        Map<String, long[]> samples = new LinkedHashMap<>();
        for (String key : SAMPLE_KEYS) {
            if (o.has(key)) {
                samples.put(key, longs(o, key));
            }
        }
        Map<String, Long> successes = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = o.path("request-success-total").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!REASONS.contains(e.getKey()) || !e.getValue().canConvertToLong() || e.getValue().asLong() < 0) {
                throw new IllegalArgumentException("--fake-metrics request-success-total: expected counts by stop, length, "
                        + "abort, error or repetition, got " + e.getKey() + ": " + e.getValue());
            }
            successes.put(e.getKey(), e.getValue().asLong());
        }
        return new FakeMetrics(number(o, "running-requests"), number(o, "waiting-requests"), number(o, "kv-cache-usage"),
                List.copyOf(loras), buckets, samples, successes, count(o, "total-prompt-tokens"), count(o, "total-generation-tokens"));
    }

    /** The JSON {@link #parse} reads, under llm-d-inference-sim's keys: parse(toJson()) is this. */
    public com.fasterxml.jackson.databind.node.ObjectNode toJson() {
        com.fasterxml.jackson.databind.node.ObjectNode o = Json.MAPPER.createObjectNode();
        if (running != null) {
            o.put("running-requests", running);
        }
        if (waiting != null) {
            o.put("waiting-requests", waiting);
        }
        if (kvCacheUsage != null) {
            o.put("kv-cache-usage", kvCacheUsage);
        }
        if (!loras.isEmpty()) {
            var list = o.putArray("loras");
            loras.forEach(l -> list.addObject().put("running", l.running()).put("waiting", l.waiting())
                    .put("timestamp", l.timestamp()));
        }
        bucketCounts.forEach((key, counts) -> {
            var a = o.putArray(key);
            for (long c : counts) {
                a.add(c);
            }
        });
        samples.forEach((key, values) -> {
            var a = o.putArray(key);
            for (long v : values) {
                a.add(v);
            }
        });
        if (!successes.isEmpty()) {
            var by = o.putObject("request-success-total");
            successes.forEach(by::put);
        }
        if (promptTokens != null) {
            o.put("total-prompt-tokens", promptTokens);
        }
        if (generationTokens != null) {
            o.put("total-generation-tokens", generationTokens);
        }
        return o;
    }

    private static Double number(JsonNode o, String key) {
        JsonNode v = o.get(key);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isNumber() || v.asDouble() < 0) {
            throw new IllegalArgumentException("--fake-metrics " + key + ": expected a number >= 0 (generator functions are not "
                    + "supported), got " + v);
        }
        return v.asDouble();
    }

    private static Long count(JsonNode o, String key) {
        Double v = number(o, key);
        return v == null ? null : v.longValue();
    }

    private static long[] longs(JsonNode o, String key) {
        JsonNode a = o.get(key);
        if (!a.isArray()) {
            throw new IllegalArgumentException("--fake-metrics " + key + ": expected a list of numbers");
        }
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            if (!a.get(i).canConvertToLong() || a.get(i).asLong() < 0) {
                throw new IllegalArgumentException("--fake-metrics " + key + ": expected whole numbers >= 0, got " + a.get(i));
            }
            out[i] = a.get(i).asLong();
        }
        return out;
    }

    /** The {@code vllm:lora_requests_info} family of the fake series (label order as vLLM declares them). */
    public void renderLoras(StringBuilder b, int maxLoras) {
        b.append("# HELP vllm:lora_requests_info Running stats on lora requests.\n# TYPE vllm:lora_requests_info gauge\n");
        for (Lora l : loras) {
            b.append("vllm:lora_requests_info{max_lora=\"").append(maxLoras).append("\",waiting_lora_adapters=\"")
                    .append(l.waiting()).append("\",running_lora_adapters=\"").append(l.running()).append("\"} ")
                    .append(LoraRequestStates.goFloat(l.timestamp())).append('\n');
        }
    }
}
