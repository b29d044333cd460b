package dev.infersim.workload.arrival;

/**
 * Multiplies another process's arrival times by a constant factor. {@link LoadPattern} uses it to reproduce vLLM's
 * rescaling of a fixed-rate schedule so that the last of N requests arrives exactly at N / rate (vLLM
 * {@code benchmarks/serve.py get_request}: it removes the 1-2% seed-to-seed spread of the schedule's length).
 */
final class ScaledArrivals implements ArrivalProcess {

    private final ArrivalProcess source;
    private final double factor;

    ScaledArrivals(ArrivalProcess source, double factor) {
        if (!(factor > 0) || Double.isInfinite(factor)) {
            throw new IllegalArgumentException("scale factor must be finite and > 0, got " + factor);
        }
        this.source = source;
        this.factor = factor;
    }

    @Override
    public long nextArrivalNanos() {
        return Math.round(source.nextArrivalNanos() * factor);
    }
}
