package dev.infersim.queueing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.commons.math3.distribution.ExponentialDistribution;
import org.junit.jupiter.api.Test;

class SequentialServiceModelTest {

    /** Exponential service of mean 1 s in 1,024 equal-probability atoms (cs^2 just below 1). */
    private static final DiscreteDistribution EXPONENTIAL = exponential();

    private static DiscreteDistribution exponential() {
        ExponentialDistribution e = new ExponentialDistribution(1);
        double[] samples = new double[100_000];
        for (int i = 0; i < samples.length; i++) {
            samples[i] = e.inverseCumulativeProbability((i + 0.5) / samples.length);
        }
        return DiscreteDistribution.ofSamples(samples);
    }

    private static SequentialServiceModel queue(double rate, double arrivalScv, DiscreteDistribution service) {
        return new SequentialServiceModel(rate, arrivalScv, service, service, DiscreteDistribution.constant(0));
    }

    @Test
    void poissonArrivalsWithConstantServiceAreMd1() {
        SequentialServiceModel q = queue(0.8, 1, DiscreteDistribution.constant(1));
        assertEquals(0.8 / (2 * 0.2), q.meanQueueingDelaySeconds(), 1e-12);
    }

    @Test
    void gammaGapsWithExponentialServiceAreTheExactGiM1() {
        // sigma = (1 + (1 - sigma) / (k rho))^{-k} at rho = 0.7: k = 1/4 gives sigma = 0.871162, k = 4 gives 0.552912;
        // E[Wq] = sigma / (mu (1 - sigma)), scaled by (ca^2 + cs^2) / (ca^2 + 1)
        double cs = EXPONENTIAL.squaredCoefficientOfVariation();
        double bursty = 0.871162 / (1 - 0.871162) * (4 + cs) / 5 * EXPONENTIAL.mean();
        double smooth = 0.552912 / (1 - 0.552912) * (0.25 + cs) / 1.25 * EXPONENTIAL.mean();
        double rate = 0.7 / EXPONENTIAL.mean();
        assertEquals(bursty, queue(rate, 4, EXPONENTIAL).meanQueueingDelaySeconds(), 1e-4 * bursty);
        assertEquals(smooth, queue(rate, 0.25, EXPONENTIAL).meanQueueingDelaySeconds(), 1e-4 * smooth);
    }

    @Test
    void heavyTrafficMeetsKingman() {
        DiscreteDistribution service = DiscreteDistribution.ofWeighted(new double[] {0.5, 1.5}, new double[] {1, 1});
        double rate = 0.995;
        double kingman = new KingmanGG1(rate, 1, 4, service.squaredCoefficientOfVariation()).meanWaitSeconds();
        assertEquals(kingman, queue(rate, 4, service).meanQueueingDelaySeconds(), 0.01 * kingman);
    }
}
