package dev.infersim.cli.options;

import dev.infersim.server.config.KvEventsConfig;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;

import java.util.List;

/**
 * {@code serve}'s KV-cache events ({@link KvEventsConfig}): vLLM's {@code --kv-events-config} JSON, or the three
 * {@code --kv-events-*} flags, and the map format of llm-d-inference-sim's flag.
 */
@OptionGroup.In(OptionGroup.OBSERVE)
public final class KvEventsOptions {
    @Option(names = "--kv-events-publisher", defaultValue = "null", paramLabel = "null|zmq",
            description = "Publish vLLM's KV-cache events (BlockStored, BlockRemoved, AllBlocksCleared) over ZMQ in vLLM's "
                    + "msgpack wire format, one message per engine step (default: ${DEFAULT-VALUE}).")
    String publisher;

    @Option(names = "--kv-events-config", paramLabel = "JSON",
            description = "vLLM's KV-event settings instead of the three --kv-events-* flags: {\"enable_kv_cache_events\": "
                    + "true, \"publisher\": \"zmq\", \"endpoint\": ..., \"replay_endpoint\": \"tcp://*:5558\", "
                    + "\"buffer_steps\": 10000, \"hwm\": 100000, \"max_queue_size\": 100000, \"topic\": ...}; "
                    + "replay_endpoint is a ROUTER socket that resends the last buffer_steps messages from a sequence number.")
    String config;

    @Option(names = "--kv-events-endpoint", defaultValue = KvEventsConfig.DEFAULT_ENDPOINT, paramLabel = "URL",
            description = "Where each engine publishes: binds with a * host, connects otherwise (e.g. tcp://indexer:5557); "
                    + "data-parallel rank r uses port + r, binding replicas the ports after. Not given: vLLM's "
                    + "${DEFAULT-VALUE}, bound on the --host interface only (given as tcp://*:PORT: every interface).")
    String endpoint;

    @Option(names = "--kv-events-topic", paramLabel = "TOPIC",
            description = "First frame of every KV-event message (default: llm-d's kv@<pod ip>:<port>@<model>, with "
                    + "$POD_IP or else --host, so every replica has its own; vLLM's own default is an empty topic).")
    String topic;

    @Option(names = "--use-vllm-map-event-format",
            description = "Send KV events as msgpack maps, as vLLM does since its PR #42892, instead of arrays "
                    + "(llm-d-inference-sim's flag).")
    boolean mapEvents;

    /**
     * The events' settings, null for none; {@code host} is where HTTP listens, {@code parsed} tells which flags were
     * given. Throws {@link IllegalArgumentException} naming the bad flag.
     */
    public KvEventsConfig settings(String host, ParseResult parsed) {
        if (config != null) {
            for (String flag : List.of("--kv-events-publisher", "--kv-events-endpoint", "--kv-events-topic")) {
                if (parsed.hasMatchedOption(flag)) {
                    throw new IllegalArgumentException("--kv-events-config and " + flag + " both set the KV events; give one");
                }
            }
            KvEventsConfig c = KvEventsConfig.fromVllmJson(config, host);
            return c == null ? null : c.withMapEvents(mapEvents);
        }
        return switch (publisher) {
            case "null" -> null;
            case "zmq" -> {
                try {
                    KvEventsConfig c = new KvEventsConfig(endpoint, topic).withMapEvents(mapEvents);
                    // vLLM's default binds every interface; without an endpoint given, infersim binds where HTTP listens
                    yield parsed.hasMatchedOption("--kv-events-endpoint") ? c : c.withBindHost(host);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--kv-events-endpoint: " + e.getMessage());
                }
            }
            default -> throw new IllegalArgumentException("--kv-events-publisher must be null or zmq, got " + publisher);
        };
    }
}
