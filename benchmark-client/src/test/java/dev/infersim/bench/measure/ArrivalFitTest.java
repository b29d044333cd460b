package dev.infersim.bench.measure;

import dev.infersim.workload.arrival.ArrivalProcess;
import dev.infersim.workload.arrival.LoadPattern;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ArrivalFitTest {

    /** {@code n} send instants of {@code pattern}'s schedule, each stretched by {@code stretch}. */
    private static long[] sends(LoadPattern pattern, int n, long seed, double stretch) {
        ArrivalProcess arrivals = pattern.arrivals(n, seed);
        long[] t = new long[n];
        for (int i = 0; i < n; i++) {
            t[i] = Math.round(arrivals.nextArrivalNanos() * stretch);
        }
        return t;
    }

    @Test
    void poissonSendsAtTheRequestedRatePass() {
        ArrivalFit fit = ArrivalFit.test(sends(LoadPattern.poisson(200), 4000, 7, 1), 4000, 200, 1);
        assertFalse(fit.off(), fit.describe());
        assertEquals(200, fit.achievedRate(), 200 * 0.02);
        assertTrue(fit.ksP() > ArrivalFit.ALPHA, fit.describe());
    }

    @Test
    void aClientThatFallsBehindSendsTooSlowlyAndIsFlagged() {
        // a client that delivers 180 of 200 requested req/s, as vLLM's benchmark_serving.py did on a busy 2-core box
        ArrivalFit fit = ArrivalFit.test(sends(LoadPattern.poisson(200), 4000, 7, 200 / 180.0), 4000, 200, 1);
        assertTrue(fit.rateOff(), fit.describe());
        assertEquals(180, fit.achievedRate(), 180 * 0.02);
        assertTrue(fit.describe().contains("against 200.00 requested"), fit.describe());
    }

    @Test
    void evenlySpacedSendsAreNotPoissonEvenAtTheRightRate() {
        ArrivalFit fit = ArrivalFit.test(sends(LoadPattern.constant(50), 1000, 1, 1), 1000, 50, 1);
        assertFalse(fit.rateOff(), fit.describe());
        assertTrue(fit.gapsOff(), fit.describe());
        assertTrue(fit.describe().contains("Kolmogorov-Smirnov"), fit.describe());
    }

    @Test
    void burstyGammaSendsPassAgainstTheirBurstinessAndFailAgainstPoisson() {
        long[] bursty = sends(LoadPattern.gamma(100, 0.25), 3000, 3, 1);
        assertFalse(ArrivalFit.test(bursty.clone(), 3000, 100, 0.25).off());
        assertTrue(ArrivalFit.test(bursty.clone(), 3000, 100, 1).gapsOff());
    }

    @Test
    void evenlySpacedAsksForASmallSpreadOfGapsNotALaw() {
        assertFalse(ArrivalFit.test(sends(LoadPattern.constant(20), 500, 1, 1), 500, 20, Double.POSITIVE_INFINITY).off());
        ArrivalFit poisson = ArrivalFit.test(sends(LoadPattern.poisson(20), 500, 1, 1), 500, 20, Double.POSITIVE_INFINITY);
        assertTrue(poisson.gapsOff(), poisson.describe());
        assertTrue(Double.isNaN(poisson.ksP()));
    }

    @Test
    void aShortRunMayMissItsRateByChanceWithoutBeingFlagged() {
        // 50 Poisson sends: a rate from 49 gaps has a standard error of 14%, so 20% off is within three of them
        ArrivalFit fit = ArrivalFit.test(sends(LoadPattern.poisson(10), 50, 5, 1.2), 50, 10, 1);
        assertFalse(fit.rateOff(), fit.describe());
        assertEquals(3 / Math.sqrt(49), fit.tolerance(), 1e-9);
    }

    @Test
    void tooFewSendsLeaveTheGapsUntested() {
        ArrivalFit fit = ArrivalFit.test(sends(LoadPattern.poisson(10), 10, 5, 1), 10, 10, 1);
        assertFalse(fit.judged());
        assertFalse(fit.gapsOff());
        assertTrue(fit.describe().contains("too few sends"), fit.describe());
    }

    @Test
    void aSingleSendIsNotJudgedAndSaysSoWithoutNaN() {
        ArrivalFit fit = ArrivalFit.test(new long[] {5}, 1, 10, 1);
        assertFalse(fit.off());
        assertEquals("1 sends, too few to judge the rate or the gaps", fit.describe());
    }

    /** The stated significance is the false-alarm rate: correct schedules are flagged about once in a thousand runs. */
    @Test
    void correctPoissonSchedulesAreFlaggedAboutAsOftenAsTheSignificanceSays() {
        int flagged = 0;
        for (long seed = 0; seed < 2000; seed++) {
            // not normalised to N / rate, so each run's own rate varies as a Poisson process's does
            LoadPattern raw = new LoadPattern(50, 1, 0, null, false);
            flagged += ArrivalFit.test(sends(raw, 300, seed, 1), 300, 50, 1).off() ? 1 : 0;
        }
        // alpha 0.001 for the gaps, and 0.27% for a rate three standard errors off: about 7 of 2,000 expected
        assertTrue(flagged <= 16, flagged + " of 2000 correct runs flagged");
    }
}
