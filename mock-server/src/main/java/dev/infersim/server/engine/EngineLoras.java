package dev.infersim.server.engine;

import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.server.observe.LoraRequestStates;

import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One engine thread's side of LoRA: the adapters registered and unloaded at run time (vLLM's
 * {@code /v1/load_lora_adapter} and {@code /v1/unload_lora_adapter}), handed to its engine between two steps, and the
 * requests it counts per adapter for {@code vllm:lora_requests_info} ({@link LoraRequestStates}, which a server's
 * engines share).
 */
final class EngineLoras {
    private final int rank;
    /** Requests per LoRA adapter; null when LoRA is off. */
    private final LoraRequestStates states;
    /** Ids of LoRA adapters registered (positive) and unloaded (negative), for the engine's caches. */
    private final ConcurrentLinkedQueue<Integer> changes = new ConcurrentLinkedQueue<>();
    /** Engine thread: scratch for the adapters of the running requests. */
    private String[] runningAdapters = new String[16];

    EngineLoras(int rank, LoraRequestStates states) {
        this.rank = rank;
        this.states = states;
    }

    /** Any thread: the adapter with this id was registered (the engine reads it into host memory) or unloaded. */
    void changed(int id, boolean registered) {
        changes.offer(registered ? id : -id);
    }

    /** Engine thread: the engine learns of the adapters registered and unloaded since the last step. */
    void apply(EngineCore engine) {
        Integer lora;
        while ((lora = changes.poll()) != null) {
            if (lora > 0) {
                engine.registerLora(lora);
            } else {
                engine.removeLora(-lora);
            }
        }
    }

    /** Event loop: {@code r} arrived. */
    void arrived(EngineRequest r) {
        if (r.lora() != null) {
            states.arrived(r.lora().name());
        }
    }

    /** Engine thread: {@code r} finished (or was aborted). */
    void finished(EngineRequest r) {
        if (r.lora() != null) {
            states.finished(r.lora().name());
        }
    }

    /** Engine thread, after planning a step: the adapters of the scheduler's running list, for the queue-based lists. */
    void reportRunning(EngineCore engine) {
        if (states == null || !states.byQueue()) {
            return;
        }
        int n = engine.runningCount();
        if (runningAdapters.length < n) {
            runningAdapters = new String[Math.max(n, 2 * runningAdapters.length)];
        }
        for (int i = 0; i < n; i++) {
            EngineRequest r = engine.running(i);
            runningAdapters[i] = r.lora() == null ? null : r.lora().name();
        }
        states.runningNow(rank, runningAdapters, n);
    }
}
