package dev.infersim.queueing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * The continuous-time chain against an iteration-by-iteration simulation of the same replica
 * (fixed seed, 1,000,000 requests, first 10% discarded). Observed over several seeds: mean
 * sojourn and TPOT agree within 1%; the mean wait within 1% at half load and within about 7%
 * at 80% load, where the simulated mean still varies by about 3% from seed to seed.
 */
class ChainAgainstDiscreteIterationsTest {

    private static final BatchingServer SERVER =
            BatchingServer.linear(16, 200, 100, new IterationTime(0.01, 0.001, 0.00001));
    private static final int REQUESTS = 1_000_000;
    private static final long SEED = 7;

    @Test
    void agreesAtHalfLoadWhereWaitingIsForIterationBoundaries() {
        double rate = 0.5 * SERVER.saturationRatePerS();
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(SERVER, rate);
        DiscreteIterationSimulation.Result simulated = DiscreteIterationSimulation.run(SERVER, rate, REQUESTS, SEED);
        double predictedWait = chain.meanQueueingDelaySeconds() + chain.meanIterationBoundaryWaitSeconds();
        assertEquals(predictedWait, simulated.meanWaitSeconds(), 0.03 * predictedWait);
        assertEquals(chain.meanSojournSeconds(), simulated.meanSojournSeconds(), 0.02 * chain.meanSojournSeconds());
        assertEquals(chain.meanTpotSeconds(), simulated.meanTpotSeconds(), 0.01 * chain.meanTpotSeconds());
    }

    @Test
    void agreesAtEightyPercentLoadWhereRequestsQueueForSlots() {
        double rate = 0.8 * SERVER.saturationRatePerS();
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(SERVER, rate);
        DiscreteIterationSimulation.Result simulated = DiscreteIterationSimulation.run(SERVER, rate, REQUESTS, SEED);
        double predictedWait = chain.meanQueueingDelaySeconds() + chain.meanIterationBoundaryWaitSeconds();
        assertEquals(predictedWait, simulated.meanWaitSeconds(), 0.10 * predictedWait);
        double p99 = chain.queueingDelayPercentileSeconds(0.99);
        assertEquals(p99, simulated.p99WaitSeconds(), 0.10 * p99);
        assertEquals(chain.meanSojournSeconds(), simulated.meanSojournSeconds(), 0.03 * chain.meanSojournSeconds());
        assertEquals(chain.meanTpotSeconds(), simulated.meanTpotSeconds(), 0.01 * chain.meanTpotSeconds());
    }
}
