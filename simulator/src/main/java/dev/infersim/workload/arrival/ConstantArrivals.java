package dev.infersim.workload.arrival;

/**
 * Evenly spaced arrivals, one every 1/rate seconds, the first after one gap: vLLM's {@code --burstiness inf}
 * (the gamma gap tends to its mean as the shape grows).
 */
public final class ConstantArrivals implements ArrivalProcess {

    private final double gapNanos;
    private long count;

    /** @param ratePerS arrival rate in requests per second, finite and positive */
    public ConstantArrivals(double ratePerS) {
        if (!(ratePerS > 0) || Double.isInfinite(ratePerS)) {
            throw new IllegalArgumentException("ratePerS must be finite and > 0, got " + ratePerS);
        }
        this.gapNanos = 1e9 / ratePerS;
    }

    @Override
    public long nextArrivalNanos() {
        count++;
        return Math.round(count * gapNanos);
    }
}
