package dev.infersim.queueing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ArrivalCountsTest {

    private static double mean(double[] law) {
        double mean = 0;
        for (int n = 0; n < law.length; n++) {
            mean += n * law[n];
        }
        return mean;
    }

    @Test
    void gammaGapsOfShapeOneCountLikePoisson() {
        ArrivalCounts nearlyPoisson = new ArrivalCounts(10, 1 - 1e-9);
        double[] poisson = new double[40];
        ArrivalCounts.poissonInto(10 * 0.37, poisson);
        double[] random = new double[40];
        double[] after = new double[40];
        double[] around = new double[40];
        nearlyPoisson.fromRandomTimeInto(0.37, random);
        nearlyPoisson.afterArrivalInto(0.37, after);
        nearlyPoisson.aroundArrivalInto(0.37, around);
        for (int n = 0; n < poisson.length; n++) {
            assertEquals(poisson[n], random[n], 1e-4, "from a random time, n = " + n);
            assertEquals(poisson[n], after[n], 1e-4, "after an arrival, n = " + n);
            assertEquals(poisson[n], around[n], 1e-4, "around an arrival, n = " + n);
        }
    }

    @Test
    void aWindowFromARandomTimeHoldsLambdaTArrivalsWhateverTheGaps() {
        for (double scv : new double[] {0.25, 4}) {
            double[] law = new double[200];
            new ArrivalCounts(32, scv).fromRandomTimeInto(0.05, law);
            assertEquals(32 * 0.05, mean(law), 1e-6, "ca^2 = " + scv);
        }
    }

    @Test
    void regularArrivalsCountOneAWindowOfTheirGap() {
        double[] law = new double[10];
        new ArrivalCounts(10, 0).fromRandomTimeInto(0.1, law);
        assertEquals(1, law[1], 0.02);
    }

    @Test
    void smoothArrivalsRarelyShareAWindowShorterThanTheirGap() {
        double[] smooth = new double[20];
        double[] bursty = new double[20];
        new ArrivalCounts(32, 0.01).aroundArrivalInto(0.3 / 32, smooth);
        new ArrivalCounts(32, 4).aroundArrivalInto(0.3 / 32, bursty);
        assertTrue(smooth[0] > 0.9999, "P(no other arrival) with nearly regular gaps: " + smooth[0]);
        // gamma gaps of shape 1/4 come in clumps: an arrival often has company, more than Poisson's 1 - e^{-0.3}
        assertTrue(1 - bursty[0] > 1.5 * -Math.expm1(-0.3), "P(another arrival) with bursty gaps: " + (1 - bursty[0]));
    }

    @Test
    void theVarianceOfALongWindowGrowsAtCaSquaredTimesTheMean() {
        assertEquals(10 * 0.37, new ArrivalCounts(10, 1).countVariance(0.37), 1e-12);
        for (double scv : new double[] {0.25, 4}) {
            ArrivalCounts counts = new ArrivalCounts(32, scv);
            // windows of 16 and 32 arrivals on average: long against the gaps, short enough that mixing the laws
            // tabulated 2% apart adds little variance
            double growth = (counts.countVariance(1) - counts.countVariance(0.5)) / (32 * 0.5);
            assertEquals(scv, growth, 0.03 * scv, "ca^2 = " + scv);
        }
    }

    @Test
    void anArrivalFindsTheServerBusyWithProbabilitySigma() {
        assertEquals(0.8, ArrivalCounts.busyRoot(8, 1, 10), 1e-9, "Poisson arrivals: sigma = rho");
        double bursty = ArrivalCounts.busyRoot(8, 4, 10);
        double smooth = ArrivalCounts.busyRoot(8, 0.25, 10);
        assertTrue(bursty > 0.8 && bursty < 1, "clumped arrivals find it busy more often: " + bursty);
        assertTrue(smooth < 0.8 && smooth > 0, "smooth ones less often: " + smooth);
        double k = 0.25;
        assertEquals(bursty, Math.pow(1 + 10 * (1 - bursty) / (k * 8), -k), 1e-12, "the root of sigma = A*(mu (1 - sigma))");
    }

    @Test
    @org.junit.jupiter.api.Timeout(10)
    void sigmaWithinRoundingOfSaturationIsFoundNotSearchedForever() {
        // a capacity planner probes rates this close to saturation; the bracket search once halved its gap to zero
        for (double scv : new double[] {0.25, 4}) {
            double sigma = ArrivalCounts.busyRoot(10 * (1 - 1e-15), scv, 10);
            assertTrue(sigma > 0.99 && sigma < 1, "ca^2 = " + scv + ": " + sigma);
        }
    }
}
