package dev.infersim.engine;

import dev.infersim.common.ConfigException;

/**
 * A LoRA adapter a request runs on (vLLM's {@code LoRARequest}): its integer id, which the scheduler counts adapters
 * by, and its name, which goes into the request's prefix-cache block hashes and KV-cache events. Equal ids mean the
 * same adapter; a serving process gives each adapter it registers a new id, from 1, as vLLM does.
 */
public record LoraAdapter(int id, String name) {

    public LoraAdapter {
        ConfigException.check(id >= 1, "a LoRA adapter's id must be >= 1, got %d", id);
        ConfigException.check(name != null && !name.isBlank(), "a LoRA adapter needs a name");
    }
}
