package dev.infersim.engine;

/**
 * The last {@value #SIZE} states of an engine's free slots and KV blocks, each in force from its time until the next,
 * so that under {@link FixedTiming} a request handed to the engine after it arrived can still start its clock at its
 * arrival when room was free for it all along (a step planned in between, or a driver's hand-over delay, must not
 * delay it). Fixed arrays: recording allocates nothing.
 */
final class FreeCapacityHistory {
    static final int SIZE = 64;

    private final long[] times = new long[SIZE];
    private final int[] slots = new int[SIZE];
    private final int[] blocks = new int[SIZE];
    private int count;
    private int next;

    /**
     * From {@code nanos} on, this many slots and blocks are free for a newcomer (0 slots: none may start). A state with
     * as many free slots as the last one is merged into it (keeping the fewer blocks), so the history spans the last
     * {@value #SIZE} changes in free slots, not merely the last steps; the answers stay on the safe side.
     */
    void record(long nanos, int freeSlots, int freeBlocks) {
        int last = (next - 1 + SIZE) % SIZE;
        if (count > 0 && slots[last] == freeSlots) {
            blocks[last] = Math.min(blocks[last], freeBlocks);
            return;
        }
        times[next] = nanos;
        slots[next] = freeSlots;
        blocks[next] = freeBlocks;
        next = (next + 1) % SIZE;
        count = Math.min(count + 1, SIZE);
    }

    /** The fewest slots free at any time from {@code nanos} until now; 0 when {@code nanos} is older than the history. */
    int minSlotsSince(long nanos) {
        return minSince(nanos, slots);
    }

    /** The fewest blocks free at any time from {@code nanos} until now; 0 when older than the history. */
    int minBlocksSince(long nanos) {
        return minSince(nanos, blocks);
    }

    private int minSince(long nanos, int[] values) {
        int min = Integer.MAX_VALUE;
        for (int k = 1; k <= count; k++) {
            int i = (next - k + SIZE) % SIZE;
            min = Math.min(min, values[i]);
            if (times[i] <= nanos) {
                return min; // the state in force at nanos
            }
        }
        return 0;
    }
}
