package dev.infersim.workload.arrival;

import java.util.random.RandomGenerator;

/**
 * vLLM's ramp-up over the request count ({@code vllm bench serve --ramp-up-strategy}): request i of N has rate
 * r_i = start + (end - start) * i/(N-1) (linear) or start * (end/start)^(i/(N-1)) (exponential), and the gap before
 * it is Gamma(shape = burstiness, scale = 1/(r_i * burstiness)), or exactly 1/r_i for infinite burstiness.
 */
public final class CountRampArrivals implements ArrivalProcess {

    private final RampUp ramp;
    private final long totalRequests;
    private final double burstiness;
    private final RandomGenerator rng;
    private long index;
    private double nowNanos;

    /**
     * @param ramp          the ramp; its duration must be 0 (count-based)
     * @param totalRequests N, the number of requests the ramp spans
     * @param burstiness    gamma shape of the gaps, > 0; infinity for evenly spaced gaps
     * @param rng           the stream the gaps are drawn from
     */
    public CountRampArrivals(RampUp ramp, long totalRequests, double burstiness, RandomGenerator rng) {
        if (ramp.durationNanos() != 0) {
            throw new IllegalArgumentException("a count-based ramp needs duration 0, got " + ramp.durationNanos() + " ns");
        }
        if (totalRequests < 1) {
            throw new IllegalArgumentException("totalRequests must be >= 1, got " + totalRequests);
        }
        if (!(burstiness > 0)) {
            throw new IllegalArgumentException("burstiness must be > 0, got " + burstiness);
        }
        this.ramp = ramp;
        this.totalRequests = totalRequests;
        this.burstiness = burstiness;
        this.rng = rng;
    }

    @Override
    public long nextArrivalNanos() {
        double meanGapNanos = 1e9 / ramp.rateForRequest(index, totalRequests);
        index++;
        nowNanos += Double.isInfinite(burstiness)
                ? meanGapNanos
                : meanGapNanos * GammaSampler.unitMean(rng, burstiness);
        return Math.round(nowNanos);
    }
}
