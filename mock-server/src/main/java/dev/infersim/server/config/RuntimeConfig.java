package dev.infersim.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.FixedTiming;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.json.JsonFields;
import dev.infersim.server.json.PyFloat;
import dev.infersim.server.observe.FakeMetrics;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The settings a server changes while it runs ({@code GET/POST /admin/config}, llm-d-inference-sim's endpoint of the
 * same name, {@code llm-d/llm-d-inference-sim@eec055a} {@code docs/api.md}): fault injection, the fake metrics
 * {@code /metrics} shows, the fixed latencies of {@code --timing fixed}, and the GPU's speed against its profile.
 * Immutable: an update validates every field it names and builds the whole next value ({@link #apply}) before anything
 * is swapped in, so a request, an engine step or a scrape sees the settings before or after an update, never a mix, and a
 * bad field leaves everything as it was.
 *
 * <p>Keys are infersim's ({@code failure_rate} ...), and llm-d-inference-sim's names are read too, so a test written
 * for it runs against infersim: {@code failure-injection-rate} (percent), {@code failure-types} (its
 * {@code invalid_api_key} is infersim's {@code auth}; faults infersim does not inject are refused),
 * {@code fake-metrics}, and its latency fields with Go durations ({@code "250ms"}).
 *
 * @param faults        fault injection
 * @param fakeMetrics   what /metrics shows in place of the engine's, as given ({@code --fake-metrics}'s JSON); null:
 *                      the engine's
 * @param fixedTiming   the fixed latencies of a {@code --timing fixed} server; null for one timed by its cost model
 * @param speedFactor   the GPU's speed against its profile: each step (or fixed latency) takes 1 / speedFactor as long
 * @param changes       updates applied since start
 */
public record RuntimeConfig(FaultSettings faults, ObjectNode fakeMetrics, FixedTiming fixedTiming, double speedFactor, long changes) {

    /** The keys of {@code POST /admin/faults}, which changes only these. */
    public static final List<String> FAULT_KEYS = List.of("failure_rate", "failure_types", "fault_after_tokens", "stall_ms",
            "slow_first_token_ms");
    private static final Map<String, String> LATENCY_KEYS = Map.of("time_to_first_token_ms", "time-to-first-token",
            "time_to_first_token_std_dev_ms", "time-to-first-token-std-dev", "inter_token_latency_ms", "inter-token-latency",
            "inter_token_latency_std_dev_ms", "inter-token-latency-std-dev", "prefill_time_per_token_ms",
            "prefill-time-per-token", "time_factor_under_load", "time-factor-under-load");
    /** llm-d-inference-sim's fault names, as infersim's. */
    private static final Map<String, String> LLMD_FAULTS = Map.of("invalid_api_key", "auth");
    private static final Pattern GO_DURATION = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|ms|s|m|h)");

    /** The settings a server starts with. */
    public static RuntimeConfig initial(ServerOptions options, ObjectNode fakeMetricsJson) {
        return new RuntimeConfig(options.faults(), fakeMetricsJson, options.fixedTiming(), 1, 0);
    }

    /** Every key this server's {@code POST /admin/config} takes, infersim's first. */
    public List<String> keys() {
        List<String> keys = new ArrayList<>(FAULT_KEYS);
        keys.addAll(List.of("fake_metrics", "speed_factor"));
        if (fixedTiming != null) {
            keys.addAll(LATENCY_KEYS.keySet().stream().sorted().toList());
        }
        return keys;
    }

    /**
     * The settings after {@code update} (an object of the fields to change, others kept), every field checked first;
     * an {@link ApiException} (400, its param the field) and nothing changed when one is wrong.
     *
     * @param allowed the keys this endpoint takes (infersim's names; llm-d-inference-sim's are read as theirs)
     */
    public RuntimeConfig apply(ObjectNode update, List<String> allowed) {
        JsonFields body = JsonFields.of(update);
        for (Iterator<String> names = update.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(infersimName(name))) {
                throw ApiException.badRequest(name, name + ": unknown field or not changeable here; known: "
                        + String.join(", ", allowed));
            }
        }
        FaultSettings nextFaults = nextFaults(body);
        ObjectNode nextFake = nextFakeMetrics(update);
        Double speed = body.optNumber("speed_factor", Double.MIN_VALUE, 1e6);
        return new RuntimeConfig(nextFaults, nextFake, nextFixedTiming(update), speed == null ? speedFactor : speed, changes + 1);
    }

    /** The infersim key an llm-d-inference-sim key stands for; an infersim key as it is. */
    private static String infersimName(String name) {
        switch (name) {
            case "failure-injection-rate":
                return "failure_rate";
            case "failure-types":
                return "failure_types";
            case "fake-metrics":
                return "fake_metrics";
            default:
                for (Map.Entry<String, String> e : LATENCY_KEYS.entrySet()) {
                    if (e.getValue().equals(name)) {
                        return e.getKey();
                    }
                }
                return name;
        }
    }

    private FaultSettings nextFaults(JsonFields body) {
        Double rate = body.optNumber("failure_rate", 0, 1);
        Integer percent = body.optInt("failure-injection-rate", 0, 100);
        if (percent != null) {
            rate = percent / 100.0;
        }
        List<FaultType> types = faults.types();
        String typesKey = body.given("failure_types") != null ? "failure_types" : "failure-types";
        JsonNode t = body.given(typesKey);
        if (t != null) {
            if (!t.isArray()) {
                throw ApiException.badRequest(typesKey, typesKey + ": expected a list of fault names");
            }
            List<FaultType> parsed = new ArrayList<>();
            for (JsonNode e : t) {
                FaultType f = e.isTextual() ? FaultType.byName(LLMD_FAULTS.getOrDefault(e.asText(), e.asText())) : null;
                if (f == null) {
                    throw ApiException.badRequest(typesKey, typesKey + ": unknown fault " + e + "; known: rate_limit, "
                            + "server_error, service_unavailable, auth (invalid_api_key), context_length, disconnect, stall, "
                            + "slow_first_token");
                }
                parsed.add(f);
            }
            types = parsed;
        }
        Integer after = body.optInt("fault_after_tokens", 0, Integer.MAX_VALUE);
        Integer stall = body.optInt("stall_ms", 0, Integer.MAX_VALUE);
        Integer slow = body.optInt("slow_first_token_ms", 0, Integer.MAX_VALUE);
        try {
            return new FaultSettings(rate == null ? faults.failureRate() : rate, types,
                    after == null ? faults.afterTokens() : after, stall == null ? faults.stallMs() : stall,
                    slow == null ? faults.slowFirstTokenMs() : slow);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(percent != null ? "failure-injection-rate" : "failure_rate", e.getMessage());
        }
    }

    /**
     * llm-d-inference-sim's partial update: the fields given replace the current ones (null leaves one as it is;
     * {@code []} or {@code {}} clears a list or map); {@code "fake_metrics": null} turns fake metrics off, so /metrics
     * shows the engine's again.
     */
    private ObjectNode nextFakeMetrics(ObjectNode update) {
        String key = update.has("fake_metrics") ? "fake_metrics" : "fake-metrics";
        JsonNode given = update.get(key);
        if (given == null) {
            return fakeMetrics;
        }
        if (given.isNull()) {
            return null;
        }
        if (!given.isObject()) {
            throw ApiException.badRequest(key, key + ": expected an object of the metrics to change, or null for none");
        }
        ObjectNode merged = fakeMetrics == null ? Json.MAPPER.createObjectNode() : fakeMetrics.deepCopy();
        given.fields().forEachRemaining(e -> {
            if (!e.getValue().isNull()) {
                merged.set(e.getKey(), e.getValue());
            }
        });
        try {
            FakeMetrics.parse(merged.toString());
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(key, e.getMessage().replace("--fake-metrics", key));
        }
        return merged;
    }

    private FixedTiming nextFixedTiming(ObjectNode update) {
        boolean any = false;
        double[] v = fixedTiming == null ? null : new double[] {fixedTiming.timeToFirstTokenMs(),
                fixedTiming.timeToFirstTokenStdDevMs(), fixedTiming.interTokenLatencyMs(),
                fixedTiming.interTokenLatencyStdDevMs(), fixedTiming.prefillTimePerTokenMs(), fixedTiming.timeFactorUnderLoad()};
        String[] order = {"time_to_first_token_ms", "time_to_first_token_std_dev_ms", "inter_token_latency_ms",
                "inter_token_latency_std_dev_ms", "prefill_time_per_token_ms", "time_factor_under_load"};
        String firstKey = null;
        for (int i = 0; i < order.length; i++) {
            for (String key : new String[] {order[i], LATENCY_KEYS.get(order[i])}) {
                JsonNode given = update.get(key);
                if (given == null) {
                    continue;
                }
                if (v == null) {
                    throw ApiException.badRequest(key, key + ": this server is timed by its engine's cost model, which has no "
                            + "fixed latencies (serve --timing fixed has); change its speed with speed_factor");
                }
                v[i] = millis(key, given, i == order.length - 1);
                any = true;
                firstKey = firstKey == null ? key : firstKey;
            }
        }
        if (!any) {
            return fixedTiming;
        }
        try {
            return new FixedTiming(v[0], v[1], v[2], v[3], v[4], v[5]);
        } catch (ConfigException e) {
            throw ApiException.badRequest(firstKey, e.getMessage());
        }
    }

    /** A latency in ms: a number, or (llm-d-inference-sim's form) a Go duration such as "250ms" or "1.5s". */
    private static double millis(String key, JsonNode given, boolean plainNumber) {
        if (given.isNumber() && Double.isFinite(given.asDouble())) {
            return given.asDouble();
        }
        if (!plainNumber && given.isTextual()) {
            String s = given.asText().trim();
            Matcher m = GO_DURATION.matcher(s);
            double ms = 0;
            int at = 0;
            while (m.find() && m.start() == at) {
                double n = Double.parseDouble(m.group(1));
                ms += n * switch (m.group(2)) {
                    case "ns" -> 1e-6;
                    case "us", "µs" -> 1e-3;
                    case "ms" -> 1;
                    case "s" -> 1e3;
                    case "m" -> 60e3;
                    default -> 3600e3;
                };
                at = m.end();
            }
            if (at == s.length() && at > 0) {
                return ms;
            }
        }
        throw ApiException.badRequest(key, key + ": expected " + (plainNumber ? "a number" : "milliseconds or a duration "
                + "such as \"250ms\"") + ", got " + JsonFields.describe(given));
    }

    /** What {@code GET /admin/config} shows: every key POST takes, with its value now. */
    public ObjectNode toJson() {
        ObjectNode o = Json.MAPPER.createObjectNode().put("failure_rate", faults.failureRate());
        ArrayNode types = o.putArray("failure_types");
        faults.types().forEach(t -> types.add(t.wireName()));
        o.put("fault_after_tokens", faults.afterTokens()).put("stall_ms", faults.stallMs())
                .put("slow_first_token_ms", faults.slowFirstTokenMs());
        o.set("fake_metrics", fakeMetrics == null ? Json.MAPPER.nullNode() : fakeMetrics.deepCopy());
        o.put("speed_factor", speedFactor);
        if (fixedTiming != null) {
            o.put("time_to_first_token_ms", fixedTiming.timeToFirstTokenMs())
                    .put("time_to_first_token_std_dev_ms", fixedTiming.timeToFirstTokenStdDevMs())
                    .put("inter_token_latency_ms", fixedTiming.interTokenLatencyMs())
                    .put("inter_token_latency_std_dev_ms", fixedTiming.interTokenLatencyStdDevMs())
                    .put("prefill_time_per_token_ms", fixedTiming.prefillTimePerTokenMs())
                    .put("time_factor_under_load", fixedTiming.timeFactorUnderLoad());
        }
        return o;
    }

    /** The fields whose values differ from {@code before}'s, as "key: old -> new" for the server's log. */
    public String changesSince(RuntimeConfig before) {
        ObjectNode now = toJson();
        ObjectNode was = before.toJson();
        List<String> out = new ArrayList<>();
        now.fieldNames().forEachRemaining(k -> {
            if (!now.get(k).equals(was.get(k))) {
                out.add(k + ": " + was.get(k) + " -> " + now.get(k));
            }
        });
        return out.isEmpty() ? "no change" : String.join(", ", out);
    }

    /** {@code infersim:config_*} series of /metrics: the settings in force, so a scrape shows when a test changed them. */
    public String metrics(int replica) {
        String labels = "{replica=\"" + replica + "\"}";
        return "# HELP infersim:config_changes_total Updates applied through POST /admin/config or /admin/faults.\n"
                + "# TYPE infersim:config_changes_total counter\n"
                + "infersim:config_changes_total" + labels + " " + changes + "\n"
                + "# HELP infersim:config_speed_factor The GPU's speed against its profile (steps take 1/x as long).\n"
                + "# TYPE infersim:config_speed_factor gauge\n"
                + "infersim:config_speed_factor" + labels + " " + PyFloat.repr(speedFactor) + "\n"
                + "# HELP infersim:config_failure_rate Share of requests given an injected fault.\n"
                + "# TYPE infersim:config_failure_rate gauge\n"
                + "infersim:config_failure_rate" + labels + " " + PyFloat.repr(faults.failureRate()) + "\n"
                + (fixedTiming == null ? "" : "# HELP infersim:config_time_to_first_token_ms Fixed mean TTFT at light load.\n"
                + "# TYPE infersim:config_time_to_first_token_ms gauge\n"
                + "infersim:config_time_to_first_token_ms" + labels + " " + PyFloat.repr(fixedTiming.timeToFirstTokenMs()) + "\n"
                + "# HELP infersim:config_inter_token_latency_ms Fixed mean gap between output tokens at light load.\n"
                + "# TYPE infersim:config_inter_token_latency_ms gauge\n"
                + "infersim:config_inter_token_latency_ms" + labels + " " + PyFloat.repr(fixedTiming.interTokenLatencyMs()) + "\n")
                + "# HELP infersim:config_fake_metrics Whether /metrics shows fake values in place of the engine's.\n"
                + "# TYPE infersim:config_fake_metrics gauge\n"
                + "infersim:config_fake_metrics" + labels + " " + (fakeMetrics == null ? 0 : 1) + "\n";
    }

    /** The parsed fake metrics in force, or null. */
    public FakeMetrics parsedFakeMetrics() {
        return fakeMetrics == null ? null : FakeMetrics.parse(fakeMetrics.toString());
    }
}
