package dev.infersim.demo;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ObjectiveMissesTest {
    private static final double OBJECTIVE = 150;

    /**
     * {@code n} TTFTs of 50 ms, {@code misses} of them 400 ms: spread evenly over the run, or one after another from the
     * middle of the run (a busy moment of the machine).
     */
    static double[] ttfts(int n, int misses, boolean together) {
        double[] t = new double[n];
        java.util.Arrays.fill(t, 50);
        for (int k = 0; k < misses; k++) {
            t[together ? (n / 2 + k) % n : (int) ((k + 0.5) * n / misses)] = 400;
        }
        return t;
    }

    @Test
    void withNoMissAboutThreeHundredSeventyRequestsShowAP99Met() {
        // Clopper-Pearson with no miss: 1 - 0.025^(1/n), under 1% from n = 368
        assertEquals(1 - Math.pow(0.025, 1 / 516.0), ObjectiveMisses.of(ttfts(516, 0, false), OBJECTIVE).missShareHigh(),
                1e-9);
        assertTrue(ObjectiveMisses.of(ttfts(368, 0, false), OBJECTIVE).showsMet(99));
        assertFalse(ObjectiveMisses.of(ttfts(367, 0, false), OBJECTIVE).showsMet(99), "too few to show it");
    }

    @Test
    void missesThatCameTogetherShowLessThanTheSameMissesSpreadOut() {
        ObjectiveMisses spread = ObjectiveMisses.of(ttfts(3000, 15, false), OBJECTIVE);
        ObjectiveMisses together = ObjectiveMisses.of(ttfts(3000, 15, true), OBJECTIVE);
        assertEquals(15, spread.misses());
        assertEquals(15, together.misses());
        assertTrue(spread.showsMet(99), "0.5% over, spread: the share is bounded under 1% " + spread.missShareHigh());
        assertFalse(together.showsMet(99), "0.5% over in one section: sectioning widens it past 1% "
                + together.missShareHigh());
    }

    @Test
    void aFailedRequestIsAMissAndRepeatsPoolTheirRequests() {
        double[] failing = ttfts(200, 0, false);
        failing[7] = Double.POSITIVE_INFINITY;
        assertEquals(1, ObjectiveMisses.of(failing, OBJECTIVE).misses());
        ObjectiveMisses once = ObjectiveMisses.of(ttfts(250, 0, false), OBJECTIVE);
        assertFalse(once.showsMet(99));
        ObjectiveMisses twice = ObjectiveMisses.pooled(List.of(once, ObjectiveMisses.of(ttfts(250, 0, false), OBJECTIVE)));
        assertEquals(500, twice.requests());
        assertTrue(twice.showsMet(99), "500 requests, none over: " + twice.missShareHigh());
    }

    @Test
    void withoutRequestsNothingIsShown() {
        assertFalse(ObjectiveMisses.of(new double[0], OBJECTIVE).showsMet(99));
        assertFalse(ObjectiveMisses.pooled(List.of()).showsMet(99));
    }
}
