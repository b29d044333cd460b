package dev.infersim.server.engine;

import dev.infersim.engine.LoraAdapter;
import dev.infersim.server.config.LoraModule;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The LoRA adapters one server (a replica, all its data-parallel engines) serves, by name: those of
 * {@code --lora-modules} and those loaded at run time. Each gets the next id from 1, as vLLM numbers its
 * {@code lora_int_id}s, so an adapter unloaded and loaded again is a new adapter to the engine. Answers with vLLM's
 * messages ({@code vllm/entrypoints/openai/serving_models.py}). Any thread.
 */
public final class LoraAdapters {
    /** A served adapter: what the engine runs, where it was said to come from, the model it adapts. */
    public record Entry(LoraAdapter adapter, String path, String parent) {
    }

    private final ConcurrentHashMap<String, Entry> byName = new ConcurrentHashMap<>();
    private final String defaultParent;
    private int nextId = 1;

    public LoraAdapters(List<LoraModule> modules, String defaultParent) {
        this.defaultParent = defaultParent;
        for (LoraModule m : modules) {
            add(m.name(), m.path(), m.baseModelName());
        }
    }

    public Entry find(String name) {
        return byName.get(name);
    }

    /** Registers an adapter; 400 when a name or path is missing or the name is taken. */
    public synchronized Entry load(String name, String path) {
        if (name == null || name.isEmpty() || path == null || path.isEmpty()) {
            throw new LoraException(400, "Both 'lora_name' and 'lora_path' must be provided.", "InvalidUserInput");
        }
        if (byName.containsKey(name)) {
            throw new LoraException(400, "The lora adapter '" + name + "' has already been loaded. If you want to load the "
                    + "adapter in place, set 'load_inplace' to True.", "InvalidUserInput");
        }
        return add(name, path, null);
    }

    /** Removes an adapter; 400 without a name, 404 for one not served. */
    public synchronized Entry unload(String name) {
        if (name == null || name.isEmpty()) {
            throw new LoraException(400, "'lora_name' needs to be provided to unload a LoRA adapter.", "InvalidUserInput");
        }
        Entry removed = byName.remove(name);
        if (removed == null) {
            throw new LoraException(404, "The lora adapter '" + name + "' cannot be found.", "NotFoundError");
        }
        return removed;
    }

    /** Every adapter, in the order it was added. */
    public List<Entry> list() {
        List<Entry> all = new ArrayList<>(byName.values());
        all.sort(Comparator.comparingInt(e -> e.adapter().id()));
        return all;
    }

    private Entry add(String name, String path, String parent) {
        Entry e = new Entry(new LoraAdapter(nextId++, name), path, parent == null ? defaultParent : parent);
        byName.put(name, e);
        return e;
    }

    /** A refusal with vLLM's error type, which for these routes is not the one its status usually maps to. */
    public static final class LoraException extends RuntimeException {
        public final int status;
        public final String type;

        LoraException(int status, String message, String type) {
            super(message, null, false, false);
            this.status = status;
            this.type = type;
        }
    }
}
