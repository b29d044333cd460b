package dev.infersim.workload;

import java.util.Arrays;

/** A growable array of ints for loading datasets without boxing. */
final class IntList {

    private int[] values = new int[64];
    private int size;

    void add(int value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    int size() {
        return size;
    }

    int[] toArray() {
        return Arrays.copyOf(values, size);
    }
}
