package dev.infersim.queueing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.MathContext;
import org.apache.commons.math3.analysis.integration.SimpsonIntegrator;
import org.junit.jupiter.api.Test;

class ClassicQueuesTest {

    private static final double EXACT = 1e-12;

    @Test
    void mm1MatchesTextbookValues() {
        MM1Queue queue = new MM1Queue(0.8, 1.0);
        assertEquals(0.8, queue.utilization(), EXACT);
        assertEquals(4.0, queue.meanWaitSeconds(), 1e-9);
        assertEquals(5.0, queue.meanSojournSeconds(), 1e-9);
        assertEquals(0.8 * Math.exp(-0.2 * 3), queue.probabilityWaitExceeds(3), EXACT);
        QueueMetrics metrics = queue.metrics();
        assertEquals(3.2, metrics.meanNumberWaiting(), 1e-9);
        assertEquals(4.0, metrics.meanNumberInSystem(), 1e-9);
    }

    @Test
    void mm1WaitPercentileIsZeroUntilTheAtomIsExceededThenLogarithmic() {
        MM1Queue queue = new MM1Queue(0.5, 1.0);
        assertEquals(0.0, queue.waitPercentileSeconds(0.4), EXACT);
        assertEquals(Math.log(0.5 / 0.01) / 0.5, queue.waitPercentileSeconds(0.99), 1e-9);
        assertEquals(0.01, queue.probabilityWaitExceeds(queue.waitPercentileSeconds(0.99)), 1e-12);
        assertEquals(-Math.log(0.01) / 0.5, queue.sojournPercentileSeconds(0.99), 1e-9);
    }

    @Test
    void unstableQueueNamesLambdaAndCapacity() {
        UnstableQueueException e = assertThrows(UnstableQueueException.class, () -> new MM1Queue(1.0, 1.0));
        assertTrue(e.getMessage().contains("lambda=1.0"), e.getMessage());
        assertTrue(e.getMessage().contains("mu"), e.getMessage());
        UnstableQueueException c = assertThrows(UnstableQueueException.class, () -> new MMcQueue(2.5, 1.0, 2));
        assertEquals(2.0, c.capacityPerS(), EXACT);
        assertTrue(c.getMessage().contains("c*mu = 2*1.0"), c.getMessage());
    }

    @Test
    void rejectsNonPositiveRatesNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new MM1Queue(-0.1, 1.0));
        assertTrue(e.getMessage().contains("arrivalRatePerS") && e.getMessage().contains("-0.1"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new MMcQueue(0.5, Double.NaN, 1));
        assertThrows(IllegalArgumentException.class, () -> new MMcQueue(0.5, 1.0, 0));
    }

    @Test
    void erlangCMatchesTableValueForTwoServers() {
        // c = 2, a = 1 erlang: C = (a^2/2 * 2/(2-1)) / (1 + a + a^2/2 * 2) = 1/3.
        assertEquals(1.0 / 3.0, ErlangC.probabilityOfWait(2, 1.0), 1e-12);
    }

    @Test
    void erlangCRecursionMatchesExactSumsForTenServers() {
        assertEquals(exactErlangC(10, 8), ErlangC.probabilityOfWait(10, 8.0), 1e-12);
        assertEquals(exactErlangC(64, 60), ErlangC.probabilityOfWait(64, 60.0), 1e-12);
    }

    @Test
    void erlangCStaysFiniteForThousandsOfServers() {
        double c = ErlangC.probabilityOfWait(5000, 4950.0);
        assertTrue(c > 0 && c < 1, "C = " + c);
    }

    @Test
    void mmcWithOneServerIsMm1() {
        MMcQueue single = new MMcQueue(0.7, 1.0, 1);
        MM1Queue mm1 = new MM1Queue(0.7, 1.0);
        assertEquals(mm1.meanWaitSeconds(), single.meanWaitSeconds(), 1e-12);
        assertEquals(mm1.waitPercentileSeconds(0.95), single.waitPercentileSeconds(0.95), 1e-12);
        for (double t : new double[] {0, 0.3, 1, 4, 20}) {
            assertEquals(Math.exp(-0.3 * t), single.probabilitySojournExceeds(t), 1e-12, "t=" + t);
        }
        assertEquals(mm1.sojournPercentileSeconds(0.99), single.sojournPercentileSeconds(0.99), 1e-9);
    }

    @Test
    void mmcSojournTailIntegratesToTheMeanSojourn() {
        MMcQueue queue = new MMcQueue(2.6, 1.0, 3);
        double mean = new SimpsonIntegrator(1e-10, 1e-12, 3, 30)
                .integrate(10_000_000, queue::probabilitySojournExceeds, 0, 200);
        assertEquals(queue.meanSojournSeconds(), mean, 1e-6);
    }

    @Test
    void mmcSojournPercentileHitsTheTail() {
        MMcQueue queue = new MMcQueue(7.0, 1.0, 8);
        double t99 = queue.sojournPercentileSeconds(0.99);
        assertEquals(0.01, queue.probabilitySojournExceeds(t99), 1e-9);
        assertTrue(t99 > queue.waitPercentileSeconds(0.99));
    }

    @Test
    void hypoexponentialTailIsContinuousWhereTheRatesMeet() {
        double equal = MMcQueue.hypoexponentialExceedance(2.0, 2.0, 1.5);
        assertEquals((1 + 2.0 * 1.5) * Math.exp(-3.0), equal, 1e-12);
        assertEquals(equal, MMcQueue.hypoexponentialExceedance(2.0 + 1e-9, 2.0, 1.5), 1e-8);
    }

    @Test
    void pollaczekKhinchineWithExponentialServiceIsMm1() {
        MG1Queue exponential = new MG1Queue(0.8, ServiceTimeMoments.exponential(1.0));
        assertEquals(4.0, exponential.meanWaitSeconds(), 1e-9);
        assertEquals(5.0, exponential.meanSojournSeconds(), 1e-9);
        // M/M/1: Wq is 0 with prob. 1 - rho, else Exp(mu - lambda), so E[Wq^2] = 2 rho / (mu - lambda)^2.
        assertEquals(2 * 0.8 / (0.2 * 0.2), exponential.waitSecondMomentSeconds2(), 1e-9);
        // M/M/1 sojourn is Exp(mu - lambda): standard deviation equals the mean.
        assertEquals(5.0, exponential.sojournStdDevSeconds(), 1e-9);
    }

    @Test
    void md1WaitsHalfAsLongAsMm1() {
        MG1Queue md1 = MG1Queue.deterministic(0.8, 1.0);
        assertEquals(new MM1Queue(0.8, 1.0).meanWaitSeconds() / 2, md1.meanWaitSeconds(), 1e-12);
        assertEquals(2.0, md1.meanWaitSeconds(), 1e-12);
    }

    @Test
    void serviceMomentsRejectImpossibleMoments() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ServiceTimeMoments(2.0, 3.0, 100.0));
        assertTrue(e.getMessage().contains("secondMomentSeconds2 3.0"), e.getMessage());
        assertEquals(0.5, ServiceTimeMoments.gamma(2.0, 0.5).squaredCoefficientOfVariation(), 1e-12);
    }

    @Test
    void kingmanIsExactForMm1AndMd1() {
        assertEquals(4.0, new KingmanGG1(0.8, 1.0, 1, 1).meanWaitSeconds(), 1e-9);
        assertEquals(MG1Queue.deterministic(0.8, 1.0).meanWaitSeconds(),
                new KingmanGG1(0.8, 1.0, 1, 0).meanWaitSeconds(), 1e-12);
    }

    @Test
    void allenCunneenReducesToKingmanForOneServerAndToErlangCForPoissonExponential() {
        assertEquals(new KingmanGG1(0.6, 1 / 0.9, 0.5, 2.0).meanWaitSeconds(),
                new AllenCunneenGGc(0.6, 0.9, 1, 0.5, 2.0).meanWaitSeconds(), 1e-12);
        assertEquals(new MMcQueue(5.0, 1.0, 6).meanWaitSeconds(),
                new AllenCunneenGGc(5.0, 1.0, 6, 1, 1).meanWaitSeconds(), 1e-12);
        assertEquals(new MMcQueue(5.0, 1.0, 6).meanWaitSeconds() / 2,
                new AllenCunneenGGc(5.0, 1.0, 6, 1, 0).meanWaitSeconds(), 1e-12);
    }

    @Test
    void littlesLawRelatesNumberRateAndTime() {
        assertEquals(12.0, LittlesLaw.meanNumber(3.0, 4.0), EXACT);
        assertEquals(4.0, LittlesLaw.meanTimeSeconds(12.0, 3.0), EXACT);
        assertEquals(3.0, LittlesLaw.arrivalRatePerS(12.0, 4.0), EXACT);
        MMcQueue queue = new MMcQueue(5.0, 1.0, 6);
        assertEquals(queue.metrics().meanNumberInSystem(), 5.0 * queue.meanSojournSeconds(), 1e-12);
    }

    /** Erlang C from its defining sums, in 50-digit decimal arithmetic. */
    private static double exactErlangC(int servers, int offeredLoad) {
        MathContext mc = new MathContext(50);
        BigDecimal a = BigDecimal.valueOf(offeredLoad);
        BigDecimal term = BigDecimal.ONE;
        BigDecimal sum = BigDecimal.ZERO;
        for (int k = 0; k < servers; k++) {
            sum = sum.add(term, mc);
            term = term.multiply(a, mc).divide(BigDecimal.valueOf(k + 1), mc);
        }
        BigDecimal waiting = term.multiply(BigDecimal.valueOf(servers), mc)
                .divide(BigDecimal.valueOf(servers - offeredLoad), mc);
        return waiting.divide(sum.add(waiting, mc), mc).doubleValue();
    }
}
