package dev.infersim.server;

/**
 * Where each engine publishes its KV-cache events ({@code --kv-events-publisher zmq}), as vLLM's
 * {@code --kv-events-config}: {@code endpoint} binds when its host is {@code *}, else connects (the usual set-up, a
 * router's indexer binding and every replica connecting to it); {@code topic} is the first frame of every message
 * (vLLM's default is empty; llm-d's indexer expects {@code kv@POD@MODEL}).
 */
public record KvEventsConfig(String endpoint, String topic) {
    public KvEventsConfig {
        if (endpoint == null || !endpoint.matches("(tcp://[^:]+:\\d+|ipc://.+|inproc://.+)")) {
            throw new IllegalArgumentException("--kv-events-endpoint must be tcp://HOST:PORT, ipc://PATH or inproc://NAME, got "
                    + endpoint);
        }
        topic = topic == null ? "" : topic;
    }

    /** Whether the publisher binds (a wildcard host, ipc or inproc) rather than connects, as vLLM decides. */
    public boolean binds() {
        return endpoint.contains("://*") || !endpoint.startsWith("tcp://");
    }

    /** The endpoint with its TCP port raised by {@code by} (ipc and inproc endpoints get a suffix). */
    String endpointPlus(int by) {
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
