package dev.infersim.queueing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BatchDispersionTest {

    private static DiscreteDistribution geometric(double mean, int cap) {
        double[] values = new double[cap];
        double[] weights = new double[cap];
        double q = 1 - 1 / mean;
        for (int l = 1; l <= cap; l++) {
            values[l - 1] = l;
            weights[l - 1] = Math.pow(q, l - 1) * (1 - q);
        }
        return DiscreteDistribution.ofWeighted(values, weights);
    }

    @Test
    void withoutFeedbackTheBatchIsAPoissonCountLikeAnInfiniteServerQueue() {
        // M/D/infinity and M/M/infinity in iteration time: Var(n) = E[n] = E[K] E[L]
        assertEquals(0.5 * 200, BatchDispersion.variance(0.5, 0, 0, 1, DiscreteDistribution.constant(200)), 1e-9);
        DiscreteDistribution geometric = geometric(100, 4000);
        assertEquals(0.5 * geometric.mean(), BatchDispersion.variance(0.5, 0, 0, 1, geometric), 1e-3 * geometric.mean());
    }

    @Test
    void prefillFeedbackWidensFixedLengthsByOneOverOneMinusXSquared() {
        double x = 0.6;
        int length = 2000;
        double variance = BatchDispersion.variance(0.5, x, 0, 1, DiscreteDistribution.constant(length));
        double mean = 0.5 * length; // E[K] counts the prompts the feedback brings too
        assertEquals(mean / ((1 - x) * (1 - x)), variance, 0.01 * variance);
    }

    @Test
    void geometricLengthsForgetTheirArrivalAndDisperseLess() {
        double x = 0.6;
        DiscreteDistribution geometric = geometric(128, 4000);
        double forgetting = BatchDispersion.variance(0.5, x, 0, 1, geometric);
        double fixed = BatchDispersion.variance(0.5, x, 0, 1, DiscreteDistribution.constant(128));
        assertTrue(forgetting < 0.8 * fixed, forgetting + " vs " + fixed);
        assertTrue(forgetting > 0.5 * geometric.mean() / (1 - x), "still wider than without feedback: " + forgetting);
    }

    @Test
    void burstyArrivalsScaleTheArrivalNoise() {
        DiscreteDistribution fixed = DiscreteDistribution.constant(128);
        double poisson = BatchDispersion.variance(0.5, 0.4, 0.001, 1, fixed);
        double bursty = BatchDispersion.variance(0.5, 0.4, 0.001, 4, fixed);
        assertEquals(4, bursty / poisson, 1e-9);
    }

    @Test
    void aLoopThatDoesNotSettleHasNoFiniteVariance() {
        // each running request lets 0.02 more arrive per iteration for 100 iterations: a gain of 2
        assertEquals(Double.POSITIVE_INFINITY, BatchDispersion.variance(0.5, 0, 0.02, 1, DiscreteDistribution.constant(100)));
    }
}
