package dev.infersim.workload.arrival;

/**
 * Open-loop send times of successive requests. Each call returns the next request's arrival time in nanoseconds
 * since the start of the run; the sequence never decreases. Implementations own their seeded random stream, so the
 * same construction replays the same times.
 *
 * <p>Closed loops (N users each sending its next request when the previous one finishes) are not arrival processes:
 * see {@link LoadPattern#closedLoop(int)}.
 */
public interface ArrivalProcess {

    /** The next request's arrival time, nanoseconds since the run start; not below the previous value. */
    long nextArrivalNanos();
}
