package dev.infersim.engine;

/** Requests waiting for admission, in the order a {@link SchedulingPolicy} serves them. */
public interface WaitingQueue {

    /** A newly arrived request. */
    void add(EngineRequest r);

    /** A preempted request, which should be resumed before later arrivals of equal rank. */
    void addPreempted(EngineRequest r);

    /** The next request to admit, or null. */
    EngineRequest peek();

    EngineRequest poll();

    boolean remove(EngineRequest r);

    int size();
}
