package dev.infersim.sim;

/**
 * A control loop that sizes a fleet from its replicas' metrics. It reads no clock: the caller passes the time of each
 * sync, so the simulator runs it in virtual time and {@code infersim autoscale} on the real clock, with the same
 * decisions for the same observations. {@link Autoscalers} looks implementations up by name.
 */
public interface Autoscaler {

    /** The metric it scales on, which the caller reads from every ready replica. */
    AutoscaleMetric metric();

    /** How often the loop runs; the caller calls {@link #sync} at this period. */
    long syncPeriodNanos();

    /**
     * One run of the loop. The caller then scales the fleet to the returned count.
     *
     * @param nowNanos    time of this sync (any fixed origin, increasing from call to call)
     * @param observation the fleet as the metrics pipeline shows it now
     * @return the replica count the fleet should have
     */
    int sync(long nowNanos, FleetObservation observation);

    /** Why the last {@link #sync} decided as it did, in words (what {@code infersim autoscale} prints); empty if unknown. */
    default String lastReason() {
        return "";
    }
}
