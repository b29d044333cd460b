package dev.infersim.engine;

import java.util.Arrays;

/**
 * Open-addressing map from a prefix block's hash to the block that holds it: the prefix cache's lookup table.
 * Primitive arrays and linear probing with backward-shift deletion, so lookups on the scheduling path neither box nor
 * allocate. Hash 0 is reserved as the empty marker (block hashes are remapped away from it).
 */
final class BlockHashIndex {
    private static final int NONE = -1;

    private long[] keys;
    private int[] values;
    private int size;
    private int mask;

    BlockHashIndex(int expected) {
        int capacity = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
        keys = new long[capacity];
        values = new int[capacity];
        mask = capacity - 1;
    }

    /** The block holding {@code hash}, or -1. */
    int get(long hash) {
        for (int i = slot(hash); ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == hash) {
                return values[i];
            }
            if (k == 0) {
                return NONE;
            }
        }
    }

    void put(long hash, int block) {
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        int i = slot(hash);
        while (keys[i] != 0 && keys[i] != hash) {
            i = (i + 1) & mask;
        }
        if (keys[i] == 0) {
            size++;
        }
        keys[i] = hash;
        values[i] = block;
    }

    void remove(long hash) {
        int i = slot(hash);
        while (keys[i] != hash) {
            if (keys[i] == 0) {
                return;
            }
            i = (i + 1) & mask;
        }
        size--;
        // backward-shift: move later entries of the probe run into the hole so lookups never stop early
        int hole = i;
        for (int j = (i + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
            int home = slot(keys[j]);
            boolean between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
            if (!between) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                hole = j;
            }
        }
        keys[hole] = 0;
    }

    int size() {
        return size;
    }

    private int slot(long hash) {
        return (int) (hash ^ (hash >>> 32)) & mask;
    }

    private void grow() {
        long[] oldKeys = keys;
        int[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new int[oldKeys.length * 2];
        mask = keys.length - 1;
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != 0) {
                put(oldKeys[i], oldValues[i]);
            }
        }
        Arrays.fill(oldKeys, 0);
    }
}
