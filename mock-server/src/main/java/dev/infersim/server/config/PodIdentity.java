package dev.infersim.server.config;

import java.util.Map;

/**
 * Who this server is in a Kubernetes cluster, from the downward API variables llm-d-inference-sim reads
 * ({@code POD_NAME}, {@code POD_NAMESPACE}, {@code POD_IP}): the {@code x-inference-pod} and {@code x-inference-namespace}
 * response headers name the pod, and the default KV-event topic {@code kv@<POD_IP>:<port>@<model>} its address.
 * Each part is null where unset.
 */
public record PodIdentity(String name, String namespace, String ip) {
    /** Outside a cluster: nothing set. */
    public static final PodIdentity NONE = new PodIdentity(null, null, null);

    public PodIdentity {
        name = blankToNull(name);
        namespace = blankToNull(namespace);
        ip = blankToNull(ip);
    }

    /** From {@code POD_NAME}, {@code POD_NAMESPACE} and {@code POD_IP} in {@code env}. */
    public static PodIdentity from(Map<String, String> env) {
        return new PodIdentity(env.get("POD_NAME"), env.get("POD_NAMESPACE"), env.get("POD_IP"));
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
