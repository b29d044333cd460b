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

    /** As {@link #server}, but an iteration's budget takes two prompts beside the decodes: k prompts span ceil(k / 2). */
    private static BatchingServer twoPromptBudget(int maxNumSeqs, DiscreteDistribution lengths) {
        double[] decode = new double[maxNumSeqs + 1];
        double[][] prefill = new double[maxNumSeqs + 1][8];
        double[][] iterations = new double[maxNumSeqs + 1][8];
        double[][][] first = new double[maxNumSeqs + 1][8][];
        for (int n = 0; n <= maxNumSeqs; n++) {
            decode[n] = n == 0 ? 0 : 0.010 + 0.0001 * n;
            for (int k = 1; k <= 8; k++) {
                int spans = (k + 1) / 2;
                prefill[n][k - 1] = spans * (0.050 + 0.0001 * n) + 0.010 * (k - 1);
                iterations[n][k - 1] = spans;
                first[n][k - 1] = new double[k];
                for (int j = 0; j < k; j++) {
                    first[n][k - 1][j] = prefill[n][k - 1] * (j / 2 + 1) / spans;
                }
            }
        }
        return new BatchingServer(maxNumSeqs, lengths, new TabulatedIterationTimes(decode, decode.clone(), prefill,
                iterations, first));
    }

    @Test
    void equalLengthsPastTheBudgetTakeTheirPrefillsInGroupsThatKeepTheirTurns() {
        BatchingServer s = twoPromptBudget(8, DiscreteDistribution.ofSamples(new double[] {100}));
        ClosedLoopBatchingModel m = new ClosedLoopBatchingModel(s, 4);
        assertEquals(ClosedLoopBatchingModel.Regime.LOCK_STEP, m.regime());
        assertEquals(2, m.lockStepGroups(), "two prompts an iteration: 4 clients in 2 groups");
        double groupPrefill = 0.050 + 0.0001 * 2 + 0.010; // 2 prompts beside the other group's 2 decodes
        assertEquals(groupPrefill, m.meanTtftSeconds(), 1e-12, "a request's first token: its group's iteration");
        double cycle = 2 * groupPrefill + (100 - 2) * 0.0104; // 100 iterations: 2 carry a group's prefill
        assertEquals(4 / cycle, m.throughputPerS(), 1e-12);
        assertEquals((cycle - groupPrefill) / 99, m.meanTpotSeconds(), 1e-12);
        ClosedLoopBatchingModel fromTheStart = new ClosedLoopBatchingModel(s, 4, 0, 40);
        double allAtOnce = (0.065 + 0.130) / 2; // 4 prompts over 2 iterations (0.130 s): the first pair, then the second
        assertEquals(0.1 * allAtOnce + 0.9 * groupPrefill, fromTheStart.meanTtftSeconds(), 1e-12,
                "the first round (a tenth of the requests) takes all four prompts in turn");
    }

    @Test
    void varyingLengthsDissolveTheStartsCohortAtTheRoundTheirSpreadCoversTheCycle() {
        // lengths 90 or 110: Var(L) = 100 a round; the cycle of 100 iterations is covered (first harmonic 5%) at
        // variance ln(20) 100^2 / (2 pi^2), after 1 + that / 100 rounds
        BatchingServer s = server(8, DiscreteDistribution.ofSamples(new double[] {90, 110}));
        double rounds = 1 + Math.log(20) * 100 * 100 / (2 * Math.PI * Math.PI) / 100;
        ClosedLoopBatchingModel early = new ClosedLoopBatchingModel(s, 4, 0, 40);
        assertEquals(rounds, early.roundsToDissolve(), 1e-9);
        assertEquals(ClosedLoopBatchingModel.Regime.COHORT, early.regime());
        ClosedLoopBatchingModel late = new ClosedLoopBatchingModel(s, 4, 4 * 20, 4 * 40);
        assertEquals(ClosedLoopBatchingModel.Regime.DISSOLVED, late.regime());
        ClosedLoopBatchingModel steady = new ClosedLoopBatchingModel(s, 4);
        assertEquals(steady.meanTtftSeconds(), late.meanTtftSeconds(), 1e-4, "dissolved: the steady state's arrivals");
        // round 1 (a tenth of the requests) prefills all 4 prompts together: 0.080 s against about 0.050
        assertTrue(early.meanTtftSeconds() > steady.meanTtftSeconds() + 0.003,
                "in the early rounds the cohort's prompts share their prefill");
        assertTrue(steady.meanTtftSeconds() < 0.051, "spread over 100 iterations, 4 clients rarely share one");
    }

    @Test
    void needsAClient() {
        assertThrows(IllegalArgumentException.class,
                () -> new ClosedLoopBatchingModel(server(4, DiscreteDistribution.ofSamples(new double[] {10})), 0));
    }
}
