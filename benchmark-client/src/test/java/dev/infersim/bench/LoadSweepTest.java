package dev.infersim.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoadSweepTest {

    private static LoadSweep.Point point(double load, double throughput, double medianTtft, Double goodput) {
        java.util.Map<String, Object> r = new java.util.HashMap<>();
        r.put("request_throughput", throughput);
        r.put("median_ttft_ms", medianTtft);
        r.put("request_goodput", goodput);
        r.put("duration", 100.0);
        r.put("completed", (long) Math.round(throughput * 100));
        r.put("failed", 0L);
        return new LoadSweep.Point(load, r);
    }

    @Test
    void rateKneeIsWhereThroughputStopsFollowingTheOfferedRate() {
        Map<String, Object> s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(
                point(1, 1.0, 50, 1.0), point(2, 2.0, 55, 1.95), point(4, 3.96, 60, 3.0),
                point(8, 5.0, 120, 1.0)), 0.9);
        assertEquals(8.0, s.get("knee_load"));
        assertTrue(((String) s.get("knee_reason")).contains("below 90%"));
        assertEquals(2.0, s.get("max_load_meeting_slo"), "4 req/s meets the SLO for only 3/3.96 = 76% of requests");
    }

    @Test
    void rateKneeAlsoTriggersOnTtftBlowUp() {
        Map<String, Object> s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(
                point(1, 1.0, 50, null), point(2, 2.0, 200, null)), 0.9);
        assertEquals(2.0, s.get("knee_load"));
        assertNull(s.get("max_load_meeting_slo"), "no goodput SLO, no SLO verdict");
    }

    @Test
    void concurrencyKneeIsWhereExtraUsersStopAddingThroughput() {
        Map<String, Object> s = LoadSweep.analyze(LoadSweep.Mode.MAX_CONCURRENCY, List.of(
                point(1, 10, 50, null), point(2, 19.5, 52, null), point(4, 36, 60, null),
                point(8, 40, 100, null)), 0.9);
        assertEquals(8.0, s.get("knee_load"), "4 -> 8 users gained 11% where linear scaling gives 100%");
    }

    @Test
    void noKneeWhenEveryPointScales() {
        Map<String, Object> s = LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, List.of(
                point(1, 1.0, 50, null), point(2, 2.0, 50, null)), 0.9);
        assertNull(s.get("knee_load"));
    }
}
