package dev.infersim.server.kv;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.EngineCore;
import dev.infersim.server.config.KvEventsConfig;

/**
 * One engine's KV-cache events ({@code --kv-events-config}): its {@link KvEventPublisher}, opened on the engine thread
 * as the thread starts and listening to the engine's KV cache, sends each step's events once the step's tokens have
 * gone out, and a prefix-cache reset's at once. Without KV events every call does nothing.
 */
public final class EngineKvEvents {
    /** Set before the thread starts; the publisher itself is made and used on the engine thread only. */
    private KvEventsConfig config;
    private Integer rank;
    private int replicaOffset;
    private KvEventPublisher publisher;

    /**
     * Publish this engine's events ({@code rank}: its data-parallel rank, null without data parallelism;
     * {@code replicaOffset}: the port offset of its replica's first engine where the publishers bind).
     */
    public void configure(KvEventsConfig config, Integer rank, int replicaOffset) {
        this.config = config;
        this.rank = rank;
        this.replicaOffset = replicaOffset;
    }

    /** Engine thread, as it starts: opens the publisher on {@code engine}'s KV cache; null, or why it could not. */
    public String open(EngineCore engine) {
        if (config == null) {
            return null;
        }
        try {
            publisher = new KvEventPublisher(config, rank, replicaOffset);
        } catch (RuntimeException e) {
            return e instanceof ConfigException ? e.getMessage() : "KV events: " + e;
        }
        engine.kvCache().setEventListener(publisher);
        return null;
    }

    /** The first frame of every message, once the server knows the port it listens on. */
    public void topic(String topic) {
        if (publisher != null) {
            publisher.topic(topic);
        }
    }

    /** Sends the events so far. */
    public void flush() {
        if (publisher != null) {
            publisher.flush();
        }
    }

    /** Sends the last events and closes the sockets, as the engine thread ends. */
    public void close() {
        if (publisher != null) {
            publisher.flush();
            publisher.close();
        }
    }
}
