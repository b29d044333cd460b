package dev.infersim.queueing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.commons.math3.distribution.GammaDistribution;
import org.junit.jupiter.api.Test;

class ContinuousBatchingModelTest {

    /** A realistic 8B-on-one-GPU shape: 6 ms fixed, 0.05 ms per sequence, 0.02 ms per prompt token. */
    private static final BatchingServer LLAMA_LIKE =
            BatchingServer.linear(256, 1000, 200, new IterationTime(0.006, 0.00005, 0.00002));

    @Test
    void singleSlotBatchIsMm1WithServiceRateOneOverMeanLengthTimesIteration() {
        // B = 1, tau(1) = 10 ms, E[L] = 50: mu = 1 / (50 * 0.01) = 2 per second.
        BatchingServer server = BatchingServer.linear(1, 0, 50, IterationTime.decodeOnly(0, 0.01));
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(server, 1.6);
        MM1Queue mm1 = new MM1Queue(1.6, 2.0);
        assertEquals(2.0, server.saturationRatePerS(), 1e-12);
        assertEquals(mm1.utilization(), chain.probabilityOfWait(), 1e-12);
        assertEquals(mm1.meanWaitSeconds(), chain.meanQueueingDelaySeconds(), 1e-9);
        assertEquals(mm1.meanSojournSeconds(), chain.meanSojournSeconds(), 1e-9);
        assertEquals(mm1.waitPercentileSeconds(0.99), chain.queueingDelayPercentileSeconds(0.99), 1e-9);
    }

    @Test
    void constantIterationTimeIsMmcWithErlangCWait() {
        // beta = 0: each of min(n, 8) requests completes at rate 1 / (E[L] alpha) = 1 / (25 * 0.02) = 2 per second.
        BatchingServer server = BatchingServer.linear(8, 0, 25, IterationTime.decodeOnly(0.02, 0));
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(server, 14.0);
        MMcQueue mmc = new MMcQueue(14.0, 2.0, 8);
        assertEquals(16.0, server.saturationRatePerS(), 1e-12);
        assertEquals(ErlangC.probabilityOfWait(8, 7.0), chain.probabilityOfWait(), 1e-12);
        assertEquals(mmc.meanWaitSeconds(), chain.meanQueueingDelaySeconds(), 1e-12);
        assertEquals(mmc.meanSojournSeconds(), chain.meanSojournSeconds(), 1e-9);
        assertEquals(mmc.probabilityWaitExceeds(0.7), chain.probabilityQueueingDelayExceeds(0.7), 1e-12);
        assertEquals(mmc.metrics().meanNumberInSystem(), chain.meanNumberInSystem(), 1e-9);
        assertEquals(mmc.utilization(), chain.utilization(), 1e-12);
    }

    @Test
    void fixedLengthsWaitHalfAsLongAsMemorylessOnes() {
        // M/D/c against M/M/c (Allen-Cunneen, (ca^2 + cs^2) / 2): same chance of waiting, half the wait, twice the decay
        BatchingServer server = BatchingServer.linear(8, 0, 25, IterationTime.decodeOnly(0.02, 0));
        MMcQueue mmc = new MMcQueue(14.0, 2.0, 8);
        ContinuousBatchingModel fixed = ContinuousBatchingModel.of(server, 14.0, 1, 0);
        assertEquals(mmc.metrics().probabilityOfWait(), fixed.probabilityOfWait(), 1e-12);
        assertEquals(mmc.meanWaitSeconds() / 2, fixed.meanQueueingDelaySeconds(), 1e-12);
        assertEquals(mmc.probabilityWaitExceeds(1.4), fixed.probabilityQueueingDelayExceeds(0.7), 1e-12);
        assertEquals(0.75 * mmc.meanWaitSeconds(), ContinuousBatchingModel.of(server, 14.0, 1, 0.5).meanQueueingDelaySeconds(), 1e-12);
        assertEquals(ContinuousBatchingModel.of(server, 14.0).meanQueueingDelaySeconds(),
                ContinuousBatchingModel.of(server, 14.0, 1, 1).meanQueueingDelaySeconds(), 1e-15, "memoryless lengths by default");
    }

    @Test
    void closedFormWaitTailEqualsTheGammaMixtureOverQueuedStates() {
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(LLAMA_LIKE, 0.97 * LLAMA_LIKE.saturationRatePerS());
        int maxBatch = LLAMA_LIKE.maxNumSeqs();
        double fullBatchRate = LLAMA_LIKE.departureRatePerS(maxBatch);
        for (double t : new double[] {0.0, 0.5, 2.0, 8.0}) {
            double mixture = 0;
            for (int n = maxBatch; chain.probabilityOfState(n) > 1e-14; n++) {
                double stages = n - maxBatch + 1;
                GammaDistribution erlang = new GammaDistribution(stages, 1 / fullBatchRate);
                double exceedance = t == 0 ? 1 : 1 - erlang.cumulativeProbability(t);
                mixture += chain.probabilityOfState(n) * exceedance;
            }
            assertEquals(mixture, chain.probabilityQueueingDelayExceeds(t), 1e-10, "t=" + t);
        }
    }

    @Test
    void ttftDistributionHasTheModelsMeanTtft() {
        for (double load : new double[] {0.1, 0.6, 0.95}) {
            ContinuousBatchingModel chain = ContinuousBatchingModel.of(LLAMA_LIKE, load * LLAMA_LIKE.saturationRatePerS());
            // E[TTFT] = integral of P(TTFT > t) dt, by the trapezoid rule far into the tail.
            double horizon = chain.ttftPercentileSeconds(1 - 1e-9) + 1.0;
            int steps = 40_000;
            double h = horizon / steps;
            double mean = 0;
            for (int i = 0; i < steps; i++) {
                mean += h * (2 - chain.probabilityTtftAtMost(i * h) - chain.probabilityTtftAtMost((i + 1) * h)) / 2;
            }
            assertEquals(chain.meanTtftSeconds(), mean, 1e-4 * chain.meanTtftSeconds(), "load " + load);
        }
    }

    @Test
    void ttftTailIsSetByIterationsAtLightLoadAndFollowsTheQueueUnderHeavyLoad() {
        double prefill = LLAMA_LIKE.iterationTimes().prefillSeconds(0, 1);
        ContinuousBatchingModel light = ContinuousBatchingModel.of(LLAMA_LIKE, 0.05 * LLAMA_LIKE.saturationRatePerS());
        assertEquals(0, light.queueingDelayPercentileSeconds(0.99), 0, "no admission wait at light load");
        double p50 = light.ttftPercentileSeconds(0.5);
        double p99 = light.ttftPercentileSeconds(0.99);
        assertTrue(p50 > prefill && p99 < 2 * prefill, p50 + " " + p99);
        // Arrivals land in the long prefill iterations of others (8% of busy time here): that, not a decode
        // iteration of a few ms, sets the p99.
        assertTrue(p99 > prefill + LLAMA_LIKE.decodeIterationSeconds(10), p50 + " " + p99);
        assertEquals(0.99, light.probabilityTtftAtMost(p99), 1e-9);
        ContinuousBatchingModel heavy = ContinuousBatchingModel.of(LLAMA_LIKE, 0.97 * LLAMA_LIKE.saturationRatePerS());
        double heavyP99 = heavy.ttftPercentileSeconds(0.99);
        assertTrue(heavyP99 >= heavy.queueingDelayPercentileSeconds(0.99) + prefill, "the boundary wait only adds");
        assertEquals(0.99, heavy.probabilityTtftAtMost(heavyP99), 1e-9);
    }

    @Test
    void promptsArrivingInTheSameIterationShareItsPrefill() {
        // Long prompts, 0.1 s of prefill each, at a rate where one arrives every other decode iteration or so.
        BatchingServer server = BatchingServer.linear(64, 5000, 100, new IterationTime(0.01, 0.0001, 0.00002));
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(server, 0.5 * server.saturationRatePerS());
        assertTrue(chain.meanSharedPrefillSeconds() > 0.01, "shared " + chain.meanSharedPrefillSeconds());
        // A second prompt in the same iteration adds a whole prompt's prefill: the tail reaches past it.
        assertTrue(chain.ttftPercentileSeconds(0.99) > 0.11 + 0.1, "p99 " + chain.ttftPercentileSeconds(0.99));
    }

    @Test
    void idleEngineGivesThePrefillAlone() {
        BatchingServer server = BatchingServer.linear(4, 0, 10, IterationTime.decodeOnly(0.01, 0));
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(server, 0.01);
        assertTrue(chain.probabilityOfState(0) > 0.99);
        assertEquals(0.01, chain.ttftPercentileSeconds(0.5), 0.01 / 8192, "to the resolution of the tabulated distribution");
    }

    @Test
    void stationaryProbabilitiesSumToOneAndBalanceArrivalsWithDepartures() {
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(LLAMA_LIKE, 0.9 * LLAMA_LIKE.saturationRatePerS());
        double mass = 0;
        double departures = 0;
        double queued = 0;
        for (int n = 0; n < 20_000; n++) {
            double p = chain.probabilityOfState(n);
            mass += p;
            departures += p * LLAMA_LIKE.departureRatePerS(n);
            queued += p * Math.max(0, n - LLAMA_LIKE.maxNumSeqs());
        }
        assertEquals(1.0, mass, 1e-12);
        // exact for the birth-death chain; the dispersion correction, which widens it about its mode, moves it by < 0.1%
        assertEquals(chain.arrivalRatePerS(), departures, 1e-3 * chain.arrivalRatePerS());
        assertEquals(queued, chain.meanNumberWaiting(), 1e-9);
    }

    @Test
    void meanTimesObeyLittlesLaw() {
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(LLAMA_LIKE, 0.95 * LLAMA_LIKE.saturationRatePerS());
        double lambda = chain.arrivalRatePerS();
        assertEquals(chain.meanNumberWaiting() / lambda, chain.meanQueueingDelaySeconds(), 1e-12);
        assertEquals(chain.meanTtftSeconds() + (LLAMA_LIKE.meanOutputTokens() - 1) * chain.meanTpotSeconds(),
                chain.meanE2elSeconds(), 1e-12);
        assertEquals(chain.meanQueueingDelaySeconds() + chain.meanIterationBoundaryWaitSeconds() + chain.meanPrefillIterationSeconds()
                + chain.meanSharedPrefillSeconds(), chain.meanTtftSeconds(), 1e-12);
        assertEquals(lambda * 200, chain.outputTokensPerS(), 1e-9);
    }

    @Test
    void tpotRisesFromOneSequenceIterationTowardsTheFullBatch() {
        double light = ContinuousBatchingModel.of(LLAMA_LIKE, 1e-4).meanTpotSeconds();
        double heavy = ContinuousBatchingModel.of(LLAMA_LIKE, 0.999 * LLAMA_LIKE.saturationRatePerS()).meanTpotSeconds();
        // alone, a request's tokens come from one-sequence decode iterations: its own prefill is not part of its TPOT
        assertEquals(LLAMA_LIKE.decodeIterationSeconds(1), light, 1e-7);
        assertTrue(heavy < LLAMA_LIKE.iterationSeconds(256) && heavy > 0.99 * LLAMA_LIKE.iterationSeconds(256),
                "heavy-load TPOT " + heavy);
    }

    @Test
    void aShortRequestsTpotIsTheLongGapAfterItsOwnPrefill() {
        // Two tokens: the one gap follows the request's own prefill iteration, during which prompts arrived that the
        // next iteration prefills, so it is longer than the batch's average gap between tokens.
        BatchingServer twoTokens = BatchingServer.linear(256, 1000, 2, new IterationTime(0.006, 0.00005, 0.00002));
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(twoTokens, 0.5 * twoTokens.saturationRatePerS());
        assertTrue(chain.meanTpotSeconds() > 1.05 * chain.meanItlSeconds(),
                "TPOT " + chain.meanTpotSeconds() + " against ITL " + chain.meanItlSeconds());
    }

    @Test
    void aLongRequestsTpotSettlesAtTheBatchsPace() {
        BatchingServer longOutputs = BatchingServer.linear(256, 1000, 5000, new IterationTime(0.006, 0.00005, 0.00002));
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(longOutputs, 0.5 * longOutputs.saturationRatePerS());
        // the first long gap is lost among 5,000; what is left differs in weighting only (TPOT per request by the
        // state it found, ITL per token by the batch)
        assertEquals(chain.meanItlSeconds(), chain.meanTpotSeconds(), 0.01 * chain.meanItlSeconds());
    }

    @Test
    void burstyArrivalsSharePrefillsMoreAndSmoothOnesLess() {
        double rate = 0.5 * LLAMA_LIKE.saturationRatePerS();
        double poisson = ContinuousBatchingModel.of(LLAMA_LIKE, rate).meanSharedPrefillSeconds();
        double bursty = ContinuousBatchingModel.of(LLAMA_LIKE, rate, 4).meanSharedPrefillSeconds();
        double smooth = ContinuousBatchingModel.of(LLAMA_LIKE, rate, 0.25).meanSharedPrefillSeconds();
        assertTrue(smooth < 0.8 * poisson && bursty > 1.5 * poisson,
                "shared prefill: smooth " + smooth + ", Poisson " + poisson + ", bursty " + bursty);
    }

    @Test
    void saturationFoldsTheAmortizedPrefillIntoTheIteration() {
        // tau(256) = 6 ms + 256 * 0.05 ms + 256 * (1000 / 200) * 0.02 ms = 44.4 ms; lambda_max = 256 / (200 * 0.0444).
        assertEquals(0.0444, LLAMA_LIKE.iterationSeconds(256), 1e-12);
        assertEquals(256 / (200 * 0.0444), LLAMA_LIKE.saturationRatePerS(), 1e-9);
        assertEquals(256 / 0.0444, LLAMA_LIKE.saturationOutputTokensPerS(), 1e-6);
    }

    @Test
    void queueingDelayPercentileGrowsWithArrivalRate() {
        double previous = -1;
        double saturation = LLAMA_LIKE.saturationRatePerS();
        for (double load = 0.80; load < 0.999; load += 0.01) {
            double p99 = ContinuousBatchingModel.of(LLAMA_LIKE, load * saturation).queueingDelayPercentileSeconds(0.99);
            assertTrue(p99 >= previous, "p99 fell at load " + load);
            previous = p99;
        }
        assertTrue(previous > 0, "the p99 wait must be positive near saturation");
    }

    @Test
    void largeBatchesNeitherOverflowNorLoseMass() {
        BatchingServer huge = BatchingServer.linear(4096, 100, 1000, IterationTime.decodeOnly(0.001, 1e-6));
        ContinuousBatchingModel chain = ContinuousBatchingModel.of(huge, 0.99 * huge.saturationRatePerS());
        double mass = 0;
        for (int n = 0; n < 200_000; n++) {
            mass += chain.probabilityOfState(n);
        }
        assertEquals(1.0, mass, 1e-9);
        assertTrue(Double.isFinite(chain.meanQueueingDelaySeconds()));
    }

    @Test
    void arrivalAtSaturationIsUnstable() {
        UnstableQueueException e = assertThrows(UnstableQueueException.class,
                () -> ContinuousBatchingModel.of(LLAMA_LIKE, LLAMA_LIKE.saturationRatePerS()));
        assertEquals(LLAMA_LIKE.saturationRatePerS(), e.capacityPerS(), 1e-12);
    }

    @Test
    void rejectsOutputLengthBelowOneToken() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BatchingServer.linear(8, 10, 0.5, IterationTime.decodeOnly(0.01, 0)));
        assertTrue(e.getMessage().contains("meanOutputTokens") && e.getMessage().contains("0.5"), e.getMessage());
    }
}
