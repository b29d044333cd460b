package dev.infersim.engine;

import java.util.ArrayDeque;

/**
 * The LoRA adapters of the step being planned (vLLM V1's {@code scheduled_loras}), by vLLM's rule: a step's batch runs
 * on at most {@code max_loras} distinct adapters. The set starts from the adapters of the running batch; a waiting
 * request on another adapter once that many are in is skipped, not blocking the requests behind it, and keeps its
 * place in the queue for the next step. Before the step runs under the cost model, each of its adapters not in a GPU
 * slot is loaded ({@link LoraSlots}), which lengthens the step by the load time. Allocation-free once the skipped
 * requests' deque has grown to its high-water mark.
 */
final class StepLoras {
    private final LoraSlots slots;
    private final int[] ids;
    private int count;
    private final WaitingQueue waiting;
    private final ArrayDeque<EngineRequest> skipped = new ArrayDeque<>();

    StepLoras(Deployment deployment, WaitingQueue waiting) {
        LoraConfig lora = deployment.lora();
        this.slots = lora == null ? null : new LoraSlots(lora, deployment.model(), deployment.tensorParallelSize());
        this.ids = new int[lora == null ? 0 : lora.maxLoras()];
        this.waiting = waiting;
    }

    /** Where each adapter lives; null when LoRA is off. */
    LoraSlots slots() { return slots; }

    /** Distinct adapters in the step so far. */
    int count() { return count; }

    /** Starts the step's set from the adapters of the running batch. */
    void startFrom(EngineRequest[] running, int runningCount) {
        count = 0;
        if (slots != null) {
            for (int i = 0; i < runningCount; i++) {
                add(running[i].lora());
            }
        }
    }

    /** Adds the adapter of a request joining the running batch (none when LoRA is off or it runs on the base model). */
    void add(LoraAdapter a) {
        if (slots != null && a != null && !contains(a.id())) {
            ids[count++] = a.id();
        }
    }

    private boolean contains(int id) {
        for (int i = 0; i < count; i++) {
            if (ids[i] == id) {
                return true;
            }
        }
        return false;
    }

    /** Takes the head of the waiting queue aside, and says so, when its adapter would be one more than the step allows. */
    boolean skip(EngineRequest r) {
        LoraAdapter a = r.lora();
        if (a == null || count < ids.length || contains(a.id())) {
            return false;
        }
        skipped.addLast(waiting.poll());
        return true;
    }

    /** Puts the skipped requests back at the head of the queue, in their order (vLLM prepends them). */
    void restoreSkipped() {
        while (!skipped.isEmpty()) {
            waiting.addPreempted(skipped.pollLast());
        }
    }

    /** Makes every adapter of the step resident on the GPU; returns the load time that adds to the step. */
    long load() {
        long nanos = 0;
        for (int i = 0; i < count; i++) {
            nanos += slots.activate(ids[i]);
        }
        return nanos;
    }
}
