package dev.infersim.server.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.json.Json;

import java.util.Iterator;
import java.util.Set;

/**
 * Where each engine publishes its KV-cache events, as vLLM's {@code --kv-events-config} ({@code vllm/config/kv_events.py},
 * {@code KVEventsConfig}): {@code endpoint} binds when its host is {@code *}, else connects (the usual set-up, a router's
 * indexer binding and every replica connecting to it); {@code topic} is the first frame of every message, or null
 * for llm-d's convention {@code kv@<pod ip>:<port>@<model>} (llm-d-inference-sim's default, {@code POD_IP} or the
 * listening host, each replica its own port, so an indexer that keys pods on the topic tells replicas apart; vLLM's
 * default is an empty topic, which every replica would share); {@code replayEndpoint}, when set, is a ROUTER socket
 * (always bound) that resends the last {@code bufferSteps} messages from a sequence number a subscriber asks for;
 * {@code hwm} is the PUB socket's high-water mark; {@code mapEvents} sends events as msgpack maps, as vLLM does since
 * its PR #42892, instead of arrays (llm-d-inference-sim's {@code --use-vllm-map-event-format}). {@code bindHost}, when
 * set, is the interface a wildcard endpoint binds instead of every interface: infersim's default when no endpoint is
 * given, the HTTP host, so that the events (prompt token ids among them) are not offered on interfaces the HTTP server
 * does not listen on.
 */
public record KvEventsConfig(String endpoint, String topic, String replayEndpoint, int bufferSteps, int hwm,
                             boolean mapEvents, String bindHost) {
    /** vLLM's defaults. */
    public static final String DEFAULT_ENDPOINT = "tcp://*:5557";
    public static final int DEFAULT_BUFFER_STEPS = 10_000;
    public static final int DEFAULT_HWM = 100_000;
    private static final Set<String> VLLM_KEYS = Set.of("enable_kv_cache_events", "publisher", "endpoint", "replay_endpoint",
            "buffer_steps", "hwm", "max_queue_size", "topic");

    public KvEventsConfig {
        checkEndpoint("endpoint", endpoint);
        if (replayEndpoint != null) {
            checkEndpoint("replay_endpoint", replayEndpoint);
        }
        if (bufferSteps < 1) {
            throw new IllegalArgumentException("buffer_steps must be >= 1, got " + bufferSteps);
        }
        if (hwm < 0) {
            throw new IllegalArgumentException("hwm must be >= 0 (0: no limit), got " + hwm);
        }
    }

    /** As vLLM binds: a wildcard endpoint on every interface. */
    public KvEventsConfig(String endpoint, String topic, String replayEndpoint, int bufferSteps, int hwm, boolean mapEvents) {
        this(endpoint, topic, replayEndpoint, bufferSteps, hwm, mapEvents, null);
    }

    /** Array events, as vLLM binds. */
    public KvEventsConfig(String endpoint, String topic, String replayEndpoint, int bufferSteps, int hwm) {
        this(endpoint, topic, replayEndpoint, bufferSteps, hwm, false, null);
    }

    /** Publishing to {@code endpoint} with {@code topic}, no replay, vLLM's buffer and high-water mark. */
    public KvEventsConfig(String endpoint, String topic) {
        this(endpoint, topic, null, DEFAULT_BUFFER_STEPS, DEFAULT_HWM, false, null);
    }

    /** The same, events sent as msgpack maps ({@code true}) or arrays. */
    public KvEventsConfig withMapEvents(boolean maps) {
        return new KvEventsConfig(endpoint, topic, replayEndpoint, bufferSteps, hwm, maps, bindHost);
    }

    /** The wildcard endpoint bound on {@code host} only (null: every interface). */
    public KvEventsConfig withBindHost(String host) {
        return new KvEventsConfig(endpoint, topic, replayEndpoint, bufferSteps, hwm, mapEvents, host);
    }

    /**
     * The topic a replica listening on {@code host:port} publishes under: the configured one, or llm-d's
     * {@code kv@<pod ip>:<port>@<model>} with {@code podIp} ({@code POD_IP}) or else {@code host}.
     */
    public String topicFor(String podIp, String host, int port, String model) {
        return topic != null ? topic : "kv@" + (podIp == null || podIp.isBlank() ? host : podIp) + ":" + port + "@" + model;
    }

    /**
     * Reads vLLM's {@code --kv-events-config} JSON: {@code enable_kv_cache_events} (default false), {@code publisher}
     * ({@code null} or {@code zmq}; unset means zmq when enabled), {@code endpoint}, {@code replay_endpoint},
     * {@code buffer_steps}, {@code hwm}, {@code max_queue_size} (checked; the engine thread sends directly, so no queue
     * forms) and {@code topic} (unset: llm-d's per-replica convention, see above). Returns null when no events are published, as vLLM's null publisher.
     *
     * @throws IllegalArgumentException naming the flag and the key at fault
     */
    public static KvEventsConfig fromVllmJson(String json) {
        return fromVllmJson(json, null);
    }

    /** As {@link #fromVllmJson(String)}; without an {@code endpoint} key, vLLM's default binds on {@code defaultBindHost}. */
    public static KvEventsConfig fromVllmJson(String json, String defaultBindHost) {
        JsonNode o;
        try {
            o = Json.MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("--kv-events-config is not JSON: " + e.getOriginalMessage());
        }
        if (o == null || !o.isObject()) {
            throw new IllegalArgumentException("--kv-events-config must be a JSON object, got " + json);
        }
        for (Iterator<String> names = o.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!VLLM_KEYS.contains(name)) {
                throw new IllegalArgumentException("--kv-events-config " + name + ": unknown key; known: "
                        + String.join(", ", VLLM_KEYS.stream().sorted().toList()));
            }
        }
        boolean enabled = bool(o, "enable_kv_cache_events", false);
        String publisher = text(o, "publisher", enabled ? "zmq" : "null");
        if (!publisher.equals("null") && !publisher.equals("zmq")) {
            throw new IllegalArgumentException("--kv-events-config publisher must be null or zmq, got " + publisher);
        }
        int maxQueueSize = integer(o, "max_queue_size", 100_000);
        if (maxQueueSize < 1) {
            throw new IllegalArgumentException("--kv-events-config max_queue_size must be >= 1, got " + maxQueueSize);
        }
        String endpoint = text(o, "endpoint", DEFAULT_ENDPOINT);
        String topic = text(o, "topic", null);
        String replay = text(o, "replay_endpoint", null);
        int bufferSteps = integer(o, "buffer_steps", DEFAULT_BUFFER_STEPS);
        int hwm = integer(o, "hwm", DEFAULT_HWM);
        KvEventsConfig config;
        try {
            config = new KvEventsConfig(endpoint, topic, replay, bufferSteps, hwm, false);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--kv-events-config " + e.getMessage());
        }
        if (!o.hasNonNull("endpoint")) {
            config = config.withBindHost(defaultBindHost);
        }
        return enabled && publisher.equals("zmq") ? config : null;
    }

    private static boolean bool(JsonNode o, String key, boolean otherwise) {
        JsonNode v = o.get(key);
        if (v == null || v.isNull()) {
            return otherwise;
        }
        if (!v.isBoolean()) {
            throw new IllegalArgumentException("--kv-events-config " + key + " must be true or false, got " + v);
        }
        return v.booleanValue();
    }

    private static String text(JsonNode o, String key, String otherwise) {
        JsonNode v = o.get(key);
        if (v == null || v.isNull()) {
            return otherwise;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException("--kv-events-config " + key + " must be a string, got " + v);
        }
        return v.textValue();
    }

    private static int integer(JsonNode o, String key, int otherwise) {
        JsonNode v = o.get(key);
        if (v == null || v.isNull()) {
            return otherwise;
        }
        if (!v.canConvertToInt() || !v.isIntegralNumber()) {
            throw new IllegalArgumentException("--kv-events-config " + key + " must be an integer, got " + v);
        }
        return v.intValue();
    }

    private static void checkEndpoint(String key, String endpoint) {
        if (endpoint == null || !endpoint.matches("(tcp://[^:]+:\\d+|ipc://.+|inproc://.+)")) {
            throw new IllegalArgumentException(key + " must be tcp://HOST:PORT, ipc://PATH or inproc://NAME, got " + endpoint);
        }
    }

    /** Whether the publisher binds (a wildcard host, ipc or inproc) rather than connects, as vLLM decides. */
    public boolean binds() {
        return endpoint.contains("://*") || !endpoint.startsWith("tcp://");
    }

    /** The endpoint with its TCP port raised by {@code by} (ipc and inproc endpoints get a suffix). */
    public String endpointPlus(int by) {
        String e = plus(endpoint, by);
        if (bindHost == null || !e.startsWith("tcp://*:")) {
            return e;
        }
        // JeroMQ takes an IPv6 literal in brackets (and only on a socket with IPv6 on)
        String host = bindHost.contains(":") && !bindHost.startsWith("[") ? "[" + bindHost + "]" : bindHost;
        return "tcp://" + host + e.substring("tcp://*".length());
    }

    /** The replay endpoint with its TCP port raised by {@code by}; null without replay. */
    public String replayEndpointPlus(int by) {
        return replayEndpoint == null ? null : plus(replayEndpoint, by);
    }

    private static String plus(String endpoint, int by) {
        if (by == 0) {
            return endpoint;
        }
        if (!endpoint.startsWith("tcp://")) {
            return endpoint + "_" + by;
        }
        int colon = endpoint.lastIndexOf(':');
        return endpoint.substring(0, colon + 1) + (Integer.parseInt(endpoint.substring(colon + 1)) + by);
    }
}
