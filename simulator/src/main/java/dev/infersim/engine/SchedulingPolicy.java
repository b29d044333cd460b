package dev.infersim.engine;

/**
 * Which waiting request is admitted next and which running request is preempted when KV blocks run out.
 * Policies are looked up by name through {@link SchedulingPolicies}.
 */
public interface SchedulingPolicy {

    /** The name users pass as {@code --scheduling-policy}. */
    String name();

    /** A fresh, empty queue ordering waiting requests for this policy. */
    WaitingQueue newWaitingQueue();

    /** Index in {@code running[0..count)} of the request to preempt; {@code running} is in admission order. */
    int chooseVictim(EngineRequest[] running, int count);
}
