package dev.infersim.queueing;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClosedLoopBatchingModelTest {
    /** Iterations of 10 ms + 0.1 ms per sequence, 50 ms for a prefill of k prompts (+10 ms each beyond one). */
    private static BatchingServer server(int maxNumSeqs, DiscreteDistribution lengths) {
        double[] decode = new double[maxNumSeqs + 1];
        double[] mean = new double[maxNumSeqs + 1];
        double[][] prefill = new double[maxNumSeqs + 1][4];
        double[][] iterations = new double[maxNumSeqs + 1][4];
        double[][][] first = new double[maxNumSeqs + 1][4][];
        for (int n = 0; n <= maxNumSeqs; n++) {
            decode[n] = n == 0 ? 0 : 0.010 + 0.0001 * n;
            mean[n] = n == 0 ? 0 : decode[n] * 1.1;
            for (int k = 1; k <= 4; k++) {
                prefill[n][k - 1] = 0.050 + 0.010 * (k - 1) + 0.0001 * n;
                iterations[n][k - 1] = 1;
                first[n][k - 1] = new double[k];
                java.util.Arrays.fill(first[n][k - 1], prefill[n][k - 1]);
            }
        }
        return new BatchingServer(maxNumSeqs, lengths, new TabulatedIterationTimes(decode, mean, prefill, iterations, first));
    }

    @Test
    void littlesLawHoldsAtEveryPopulation() {
        BatchingServer s = server(8, DiscreteDistribution.ofSamples(new double[] {50, 150}));
        for (int n = 1; n <= 20; n++) {
            ClosedLoopBatchingModel m = new ClosedLoopBatchingModel(s, n);
            assertEquals(n, m.throughputPerS() * m.meanE2elSeconds(), 1e-9, "N = X R at N = " + n);
            assertEquals(Math.min(n, 8), m.batchSize());
        }
    }

    @Test
    void oneClientWaitsForNothingAndDecodesAlone() {
        BatchingServer s = server(8, DiscreteDistribution.ofSamples(new double[] {50, 150}));
        ClosedLoopBatchingModel m = new ClosedLoopBatchingModel(s, 1);
        assertEquals(0.050, m.meanTtftSeconds(), 1e-12, "its own prefill beside no decodes");
        assertEquals(0.0101 * 1.1, m.meanTpotSeconds(), 1e-12);
        assertEquals(0, m.meanQueueingDelaySeconds());
    }

    @Test
    void pastTheBatchLimitThroughputIsTheFullServersAndTheRestQueues() {
        BatchingServer s = server(8, DiscreteDistribution.ofSamples(new double[] {50, 150}));
        ClosedLoopBatchingModel full = new ClosedLoopBatchingModel(s, 8);
        ClosedLoopBatchingModel over = new ClosedLoopBatchingModel(s, 16);
        assertEquals(s.saturationRatePerS(), over.throughputPerS(), 1e-12);
        assertTrue(over.meanQueueingDelaySeconds() > 0);
        assertEquals(16 / over.throughputPerS() - 8 / over.throughputPerS(), over.meanQueueingDelaySeconds(), 1e-12);
        assertTrue(over.meanTtftSeconds() > full.meanTtftSeconds() + over.meanQueueingDelaySeconds() * 0.9);
    }

    @Test
    void fixedLengthsMoveInStepWavesOfPrefillThenDecode() {
        BatchingServer s = server(8, DiscreteDistribution.ofSamples(new double[] {100, 100}));
        ClosedLoopBatchingModel m = new ClosedLoopBatchingModel(s, 4);
        assertEquals(0.080, m.meanTtftSeconds(), 1e-12, "4 prompts prefilled together, nothing decoding");
        assertEquals(0.0104, m.meanTpotSeconds(), 1e-12, "the decode iteration of 4: no prefill between waves");
        assertEquals(4 / (0.080 + 99 * 0.0104), m.throughputPerS(), 1e-12);
    }

    @Test
    void needsAClient() {
        assertThrows(IllegalArgumentException.class,
                () -> new ClosedLoopBatchingModel(server(4, DiscreteDistribution.ofSamples(new double[] {10})), 0));
    }
}
