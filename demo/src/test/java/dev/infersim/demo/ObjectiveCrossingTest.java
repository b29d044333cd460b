package dev.infersim.demo;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ObjectiveCrossingTest {
    private static final double[] RATES = {10, 20, 30};

    @Test
    void crossesBetweenTheLastRateMeetingTheObjectiveAndTheFirstMissingItOnALogLatencyScale() {
        assertEquals(20 + 10 * Math.log(2) / Math.log(4), ObjectiveCrossing.crossing(RATES, new double[] {50, 100, 400}, 200),
                1e-12);
    }

    @Test
    void everyRateMeetingItGivesAtLeastTheHighestWithNoUpperBound() {
        RateEstimate e = ObjectiveCrossing.highestRateMeeting(RATES, new double[] {50, 60, 70}, new double[] {45, 55, 65},
                new double[] {55, 65, 75}, 200);
        assertEquals(30, e.perS());
        assertEquals(30, e.lowPerS());
        assertTrue(Double.isInfinite(e.highPerS()));
    }

    @Test
    void noRateMeetingItIsNoRateWithAnUpperBoundWhereTheLowerCurveCrosses() {
        RateEstimate e = ObjectiveCrossing.highestRateMeeting(RATES, new double[] {250, 300, 400},
                new double[] {150, 300, 400}, new double[] {300, 320, 450}, 200);
        assertTrue(Double.isNaN(e.perS()));
        assertEquals(0, e.lowPerS());
        assertEquals(10 + 10 * Math.log(200 / 150.0) / Math.log(2), e.highPerS(), 1e-12);
    }

    @Test
    void aPointWithoutAValueOrAnUpperBoundCountsAsMissing() {
        assertEquals(20, ObjectiveCrossing.crossing(RATES, new double[] {50, 100, Double.NaN}, 200));
        assertEquals(20, ObjectiveCrossing.crossing(RATES, new double[] {50, 100, Double.POSITIVE_INFINITY}, 200));
    }
}
