package dev.infersim.engine;

/**
 * Where each LoRA adapter lives, and what making one resident costs (see {@link LoraConfig}). vLLM keeps two LRU
 * caches, GPU slots ({@code max_loras}) and host memory ({@code max_cpu_loras} >= that), and touches both for every
 * adapter of every batch in the same order; so the GPU always holds the {@code max_loras} most recently used adapters
 * and host memory the {@code max_cpu_loras} most recent. One recency list of adapter ids therefore holds both: the
 * first {@code max_loras} entries are on the GPU, the rest only in host memory. Allocation-free.
 */
final class LoraSlots {
    private final int gpuSlots;
    private final int[] recent;
    private int size;
    private final long hostCopyNanos;
    private final long storageReadNanos;
    private long loads;

    LoraSlots(LoraConfig config, ModelProfile model, int tensorParallelSize) {
        gpuSlots = config.maxLoras();
        recent = new int[config.maxCpuLoras()];
        hostCopyNanos = config.hostCopyNanos(model, tensorParallelSize);
        storageReadNanos = config.storageReadNanos(model);
    }

    /** Makes the adapter the most recently used, resident on the GPU; returns the nanoseconds that took (0 if it was). */
    long activate(int id) {
        int at = indexOf(id);
        long nanos = at < 0 ? storageReadNanos + hostCopyNanos : at >= gpuSlots ? hostCopyNanos : 0;
        if (nanos > 0) {
            loads++;
        }
        int from = at < 0 ? Math.min(size, recent.length - 1) : at;
        System.arraycopy(recent, 0, recent, 1, from);
        recent[0] = id;
        size = Math.max(size, from + 1);
        return nanos;
    }

    /** Drops an unloaded adapter from both caches. */
    void remove(int id) {
        int at = indexOf(id);
        if (at >= 0) {
            System.arraycopy(recent, at + 1, recent, at, size - at - 1);
            size--;
        }
    }

    boolean onGpu(int id) {
        int at = indexOf(id);
        return at >= 0 && at < gpuSlots;
    }

    boolean inHostMemory(int id) {
        return indexOf(id) >= 0;
    }

    /** Adapter loads onto the GPU so far (each a host copy, some also a storage read). */
    long loads() {
        return loads;
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
