package dev.infersim.workload.arrival;

import java.util.random.RandomGenerator;

/**
 * Renewal arrivals with gamma-distributed gaps, vLLM's {@code --request-rate R --burstiness B}: each gap is
 * Gamma(shape = B, scale = 1 / (R * B)), so the mean gap is 1/R whatever B, and the coefficient of variation of the
 * gaps is 1/sqrt(B). B = 1 gives a Poisson process (exponential gaps); B below 1 is burstier, above 1 smoother.
 * As in vLLM the first request arrives after one gap, not at time 0.
 */
public final class GammaArrivals implements ArrivalProcess {

    private final double meanGapNanos;
    private final double shape;
    private final RandomGenerator rng;
    private double nowNanos;

    /**
     * @param ratePerS   mean arrival rate in requests per second, finite and positive
     * @param burstiness gamma shape, finite and positive; 1 = Poisson
     * @param rng        the stream the gaps are drawn from
     */
    public GammaArrivals(double ratePerS, double burstiness, RandomGenerator rng) {
        if (!(ratePerS > 0) || Double.isInfinite(ratePerS)) {
            throw new IllegalArgumentException("ratePerS must be finite and > 0, got " + ratePerS);
        }
        if (!(burstiness > 0) || Double.isInfinite(burstiness)) {
            throw new IllegalArgumentException("burstiness must be finite and > 0, got " + burstiness);
        }
        this.meanGapNanos = 1e9 / ratePerS;
        this.shape = burstiness;
        this.rng = rng;
    }

    /** Poisson arrivals: exponential gaps with mean 1/rate. */
    public static GammaArrivals poisson(double ratePerS, RandomGenerator rng) {
        return new GammaArrivals(ratePerS, 1.0, rng);
    }

    @Override
    public long nextArrivalNanos() {
        nowNanos += meanGapNanos * GammaSampler.unitMean(rng, shape);
        return Math.round(nowNanos);
    }
}
