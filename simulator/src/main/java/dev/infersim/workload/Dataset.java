package dev.infersim.workload;

import dev.infersim.workload.arrival.ArrivalProcess;
import dev.infersim.workload.arrival.LoadPattern;

/**
 * Where request contents come from: lengths, shared prefixes, text. A dataset is immutable; each
 * {@link #cursor(long, long)} is a fresh, deterministic pass, so two passes with the same seed yield equal requests.
 * Arrival times come from outside ({@link LoadPattern}) and are stamped onto the requests the cursor builds.
 */
public interface Dataset {

    /** The dataset's name as {@code --dataset-name} spells it. */
    String name();

    /**
     * How many requests a run asking for {@code numPrompts} gets. Usually {@code numPrompts}; vLLM's
     * prefix_repetition rounds down to a multiple of the prefix count, and a trace stops at its last line.
     */
    default long requestCount(long numPrompts) {
        return numPrompts;
    }

    /**
     * Arrival times carried by the dataset itself (a trace), as a fresh process from the first arrival on each call;
     * null when arrivals come from the load pattern.
     */
    default ArrivalProcess recordedArrivals() {
        return null;
    }

    /**
     * Starts a pass over the dataset.
     *
     * @param seed     fixes every random choice of the pass
     * @param requests how many requests the pass will be asked for (a value of {@link #requestCount})
     */
    Cursor cursor(long seed, long requests);

    /** One pass: requests in stream order. */
    interface Cursor {

        /** The request at {@code index} (called with 0, 1, 2, ... in order) arriving at {@code arrivalNanos}. */
        WorkloadRequest next(long index, long arrivalNanos);
    }
}
