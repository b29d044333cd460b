package dev.infersim.server.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.KvTransferLink;
import dev.infersim.server.engine.KvTransferParams;
import dev.infersim.server.json.Json;

import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The mock's KV connector, as vLLM's {@code --kv-transfer-config} configures one ({@code KVTransferConfig},
 * vllm/config/kv_transfer.py at https://github.com/vllm-project/vllm/blob/9aaf83ef502fc37bc647f6e474314d48ba36cd1c/vllm/config/kv_transfer.py)
 * with {@code "kv_connector": "NixlConnector"}, the one connector the mock speaks (prefill/decode disaggregation by
 * {@code kv_transfer_params}, see {@link KvTransferParams}).
 *
 * <p>As vLLM's NixlConnector, the role does not change what a server does: "NixlConnector currently does not distinguish
 * kv_role; the actual prefiller/decoder roles are determined by the upper-level proxy" (docs/features/nixl_connector_usage.md
 * at the same commit). A request with {@code do_remote_decode} is prefilled and its blocks held; one with
 * {@code do_remote_prefill} pulls them, whatever the role.
 *
 * @param kvRole            {@code kv_producer}, {@code kv_consumer} or {@code kv_both}
 * @param engineId          {@code engine_id}; vLLM draws a random UUID when it is absent, the mock one from its seed and
 *                          replica; with {@code --data-parallel-size} engine r is {@code <engineId>_dp<r>}, as vLLM's
 * @param leaseSeconds      {@code kv_connector_extra_config.kv_lease_duration} (vLLM's default 30): model seconds a
 *                          prefill's blocks stay held for a decode side that has not read them; each heartbeat of the
 *                          decode side extends the lease to two thirds of it from then
 * @param sideChannelHost   where the decode side reaches this server's prefills: vLLM's {@code VLLM_NIXL_SIDE_CHANNEL_HOST}
 *                          (default localhost), sent as {@code remote_host}
 * @param sideChannelPort   vLLM's {@code VLLM_NIXL_SIDE_CHANNEL_PORT} (default 5600): engine r of replica i listens on
 *                          port + i x engines + r (vLLM's port + data-parallel rank) and sends it as {@code remote_port};
 *                          0 takes free ports
 * @param link              what a decode pull costs ({@code --kv-transfer-gbps}, {@code --kv-transfer-latency-ms})
 * @param peers             the hosts a request's {@code remote_host} may name besides {@link #sideChannelHost} (where
 *                          this fleet's own replicas listen): {@code --kv-transfer-peers}, by default the loopback
 *                          names. The side channel sends only to these, compared as written, never resolved first: a
 *                          request cannot have the mock reach out to a host of its choosing.
 */
public record KvTransferConfig(String kvRole, String engineId, int leaseSeconds, String sideChannelHost,
                               int sideChannelPort, KvTransferLink link, Set<String> peers) {
    public static final String CONNECTOR = "NixlConnector";
    public static final List<String> ROLES = List.of("kv_producer", "kv_consumer", "kv_both");
    public static final int DEFAULT_LEASE_SECONDS = 30;
    public static final String DEFAULT_SIDE_CHANNEL_HOST = "localhost";
    public static final int DEFAULT_SIDE_CHANNEL_PORT = 5600;
    /** The peers allowed without {@code --kv-transfer-peers}: this machine's loopback names. */
    public static final Set<String> LOOPBACK_PEERS = Set.of("localhost", "127.0.0.1", "::1");
    /** KVTransferConfig's fields at the cited commit; any other key is refused, as vLLM's config class refuses it. */
    private static final Set<String> VLLM_KEYS = Set.of("kv_connector", "engine_id", "kv_buffer_device", "kv_buffer_size",
            "kv_role", "kv_rank", "kv_parallel_size", "kv_ip", "kv_port", "kv_connector_extra_config",
            "kv_connector_module_path", "enable_permute_local_kv", "kv_load_failure_policy");

    public KvTransferConfig {
        check(ROLES.contains(kvRole), "kv_role must be one of " + ROLES + ", got " + kvRole);
        check(engineId == null || !engineId.isBlank(), "engine_id must not be blank");
        check(leaseSeconds >= 1, "kv_connector_extra_config.kv_lease_duration must be >= 1 s, got " + leaseSeconds);
        check(sideChannelHost != null && !sideChannelHost.isBlank(), "VLLM_NIXL_SIDE_CHANNEL_HOST must not be blank");
        check(sideChannelPort >= 0 && sideChannelPort <= 65535,
                "VLLM_NIXL_SIDE_CHANNEL_PORT must be in 0..65535, got " + sideChannelPort);
        Objects.requireNonNull(link, "link");
        Objects.requireNonNull(peers, "peers");
        Set<String> normal = new TreeSet<>();
        for (String peer : peers) {
            check(peer != null && !peer.isBlank(), "--kv-transfer-peers: a host must not be blank");
            normal.add(normalHost(peer));
        }
        peers = Collections.unmodifiableSet(normal);
    }

    /** A connector whose peers are the loopback names (and its own side-channel host). */
    public KvTransferConfig(String kvRole, String engineId, int leaseSeconds, String sideChannelHost, int sideChannelPort,
                            KvTransferLink link) {
        this(kvRole, engineId, leaseSeconds, sideChannelHost, sideChannelPort, link, LOOPBACK_PEERS);
    }

    /** Whether a request's {@code remote_host} names this fleet's side-channel host or one of the {@link #peers}. */
    public boolean allowsPeer(String host) {
        String h = normalHost(host);
        return h.equals(normalHost(sideChannelHost)) || peers.contains(h);
    }

    /** A host as peers are compared: lower case, an IPv6 literal without its brackets. Nothing is resolved. */
    private static String normalHost(String host) {
        String h = host.trim().toLowerCase(Locale.ROOT);
        return h.length() > 1 && h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }

    /** The same connector allowing {@code peers} (with its own side-channel host) as remote hosts. */
    public KvTransferConfig withPeers(Set<String> peers) {
        return new KvTransferConfig(kvRole, engineId, leaseSeconds, sideChannelHost, sideChannelPort, link, peers);
    }

    /** The lease in model nanoseconds. */
    public long leaseNanos() {
        return leaseSeconds * 1_000_000_000L;
    }

    /** What one heartbeat extends a lease to, from its arrival: vLLM's {@code kv_lease_duration * 2 // 3} seconds. */
    public long leaseExtensionNanos() {
        return leaseSeconds * 2L / 3 * 1_000_000_000L;
    }

    /** How often a decode side sends heartbeats for requests waiting to pull: vLLM's {@code kv_lease_duration // 6} seconds. */
    public long heartbeatIntervalNanos() {
        return Math.max(1, leaseSeconds / 6) * 1_000_000_000L;
    }

    /** The same connector on other side-channel coordinates. */
    public KvTransferConfig withSideChannel(String host, int port) {
        return new KvTransferConfig(kvRole, engineId, leaseSeconds, host, port, link, peers);
    }

    /**
     * Reads vLLM's {@code --kv-transfer-config} JSON. Returns null when it sets no {@code kv_connector} (no connector, as
     * in vLLM).
     *
     * @throws IllegalArgumentException naming the flag and the key at fault
     */
    public static KvTransferConfig fromVllmJson(String json, String sideChannelHost, int sideChannelPort, KvTransferLink link) {
        JsonNode o;
        try {
            o = Json.MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("--kv-transfer-config is not JSON: " + e.getOriginalMessage());
        }
        check(o != null && o.isObject(), "--kv-transfer-config must be a JSON object, got " + json);
        for (Iterator<String> names = o.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            check(VLLM_KEYS.contains(name), "--kv-transfer-config " + name + ": unknown key; known: "
                    + String.join(", ", VLLM_KEYS.stream().sorted().toList()));
        }
        String connector = text(o, "kv_connector");
        String role = text(o, "kv_role");
        if (connector == null) {
            return null;
        }
        check(role != null, "--kv-transfer-config: Please specify kv_role when kv_connector is set, supported roles are "
                + ROLES);
        check(connector.equals(CONNECTOR), "--kv-transfer-config kv_connector: the mock speaks " + CONNECTOR
                + "'s protocol only, got " + connector);
        check(ROLES.contains(role), "--kv-transfer-config kv_role: Unsupported kv_role: " + role + ". Supported roles are "
                + ROLES);
        String policy = text(o, "kv_load_failure_policy");
        check(policy == null || policy.equals("fail") || policy.equals("recompute"),
                "--kv-transfer-config kv_load_failure_policy must be fail or recompute, got " + policy);
        JsonNode extra = o.get("kv_connector_extra_config");
        int lease = DEFAULT_LEASE_SECONDS;
        if (extra != null && !extra.isNull()) {
            check(extra.isObject(), "--kv-transfer-config kv_connector_extra_config must be an object");
            JsonNode l = extra.get("kv_lease_duration");
            if (l != null && !l.isNull()) {
                check(l.isIntegralNumber() && l.canConvertToInt() && l.asInt() >= 1,
                        "--kv-transfer-config kv_connector_extra_config.kv_lease_duration must be an integer >= 1, got " + l);
                lease = l.asInt();
            }
        }
        try {
            return new KvTransferConfig(role, text(o, "engine_id"), lease, sideChannelHost, sideChannelPort, link);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--kv-transfer-config " + e.getMessage(), e);
        }
    }

    private static String text(JsonNode o, String key) {
        JsonNode v = o.get(key);
        if (v == null || v.isNull()) {
            return null;
        }
        check(v.isTextual(), "--kv-transfer-config " + key + " must be a string, got " + v);
        return v.asText();
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
