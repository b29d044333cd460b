package dev.infersim.queueing;

/**
 * Thrown when a queue's arrival rate reaches or exceeds its service capacity, so it has no
 * stationary distribution and its waiting times grow without bound. Callers that sweep the
 * arrival rate catch it to report saturation.
 */
public final class UnstableQueueException extends IllegalArgumentException {

    private final double arrivalRatePerS;
    private final double capacityPerS;

    /**
     * @param arrivalRatePerS the offending arrival rate lambda, requests per second
     * @param capacityPerS the service capacity, requests per second
     * @param capacityFormula how the capacity was computed, for the message (e.g. "c*mu = 2*0.5")
     */
    public UnstableQueueException(double arrivalRatePerS, double capacityPerS, String capacityFormula) {
        super("unstable queue: arrival rate lambda=" + arrivalRatePerS + "/s >= capacity "
                + capacityFormula + " = " + capacityPerS + "/s");
        this.arrivalRatePerS = arrivalRatePerS;
        this.capacityPerS = capacityPerS;
    }

    public double arrivalRatePerS() {
        return arrivalRatePerS;
    }

    public double capacityPerS() {
        return capacityPerS;
    }
}
