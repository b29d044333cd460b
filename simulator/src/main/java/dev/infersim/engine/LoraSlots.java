package dev.infersim.engine;

import dev.infersim.engine.profile.ModelProfile;

/**
 * Where each LoRA adapter lives, and what making one resident costs (see {@link LoraConfig}). vLLM keeps two LRU
 * caches: host memory ({@code max_cpu_loras} adapters), touched when an adapter is registered or runs, and GPU slots
 * ({@code max_loras} <= that), touched when it runs; an adapter evicted from host memory leaves its GPU slot too. One
 * recency list of adapter ids holds both: its order is the host cache's, a flag marks the adapters in GPU slots, and
 * the least recent of those gives its slot up. Allocation-free.
 */
final class LoraSlots {
    private final int gpuSlots;
    private final int[] recent;
    private final boolean[] onGpu;
    private int size;
    private int gpuCount;
    private final long hostCopyNanos;
    private final long storageReadNanos;
    private long loads;

    LoraSlots(LoraConfig config, ModelProfile model, int tensorParallelSize) {
        gpuSlots = config.maxLoras();
        recent = new int[config.maxCpuLoras()];
        onGpu = new boolean[config.maxCpuLoras()];
        hostCopyNanos = config.hostCopyNanos(model, tensorParallelSize);
        storageReadNanos = config.storageReadNanos(model);
    }

    /** Makes the adapter the most recently used, in a GPU slot; returns the nanoseconds that took (0 if it was there). */
    long activate(int id) {
        int at = indexOf(id);
        long nanos = at < 0 ? storageReadNanos + hostCopyNanos : onGpu[at] ? 0 : hostCopyNanos;
        if (nanos == 0) {
            moveToFront(at);
            return 0;
        }
        loads++;
        if (at < 0) {
            insertAtFront(id);
        } else {
            moveToFront(at);
        }
        if (gpuCount == gpuSlots) {
            for (int i = size - 1; i > 0; i--) { // the least recent adapter in a slot gives it up
                if (onGpu[i]) {
                    onGpu[i] = false;
                    gpuCount--;
                    break;
                }
            }
        }
        onGpu[0] = true;
        gpuCount++;
        return nanos;
    }

    /**
     * Reads an adapter into host memory ahead of its first step, as vLLM does when an adapter is registered: it becomes
     * the most recent adapter of the host cache, not in a GPU slot. Nothing changes when it is resident already.
     */
    void preload(int id) {
        if (indexOf(id) < 0) {
            insertAtFront(id);
        }
    }

    /** Drops an unloaded adapter from both caches. */
    void remove(int id) {
        int at = indexOf(id);
        if (at >= 0) {
            gpuCount -= onGpu[at] ? 1 : 0;
            System.arraycopy(recent, at + 1, recent, at, size - at - 1);
            System.arraycopy(onGpu, at + 1, onGpu, at, size - at - 1);
            size--;
        }
    }

    boolean onGpu(int id) {
        int at = indexOf(id);
        return at >= 0 && onGpu[at];
    }

    /** Adapter loads onto the GPU so far (each a host copy, some also a storage read). */
    long loads() {
        return loads;
    }

    /** Puts a new adapter first, not on the GPU; the least recent adapter leaves when the host cache is full. */
    private void insertAtFront(int id) {
        if (size == recent.length) {
            gpuCount -= onGpu[size - 1] ? 1 : 0;
            size--;
        }
        System.arraycopy(recent, 0, recent, 1, size);
        System.arraycopy(onGpu, 0, onGpu, 1, size);
        recent[0] = id;
        onGpu[0] = false;
        size++;
    }

    private void moveToFront(int at) {
        int id = recent[at];
        boolean gpu = onGpu[at];
        System.arraycopy(recent, 0, recent, 1, at);
        System.arraycopy(onGpu, 0, onGpu, 1, at);
        recent[0] = id;
        onGpu[0] = gpu;
    }

    private int indexOf(int id) {
        for (int i = 0; i < size; i++) {
            if (recent[i] == id) {
                return i;
            }
        }
        return -1;
    }
}
