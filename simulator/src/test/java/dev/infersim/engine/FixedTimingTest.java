package dev.infersim.engine;

import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The engine under fixed timing: every request on its own timeline, exactly as set, up to max-num-seqs at once. */
class FixedTimingTest {
    private static final long MS = 1_000_000;

    private static EngineCore engine(int maxNumSeqs, FixedTiming timing) {
        Deployment d = EngineFixtures.h100Llama8b().maxNumSeqs(maxNumSeqs).build();
        return EngineCore.fixed(d, KvCapacity.of(d), SchedulingPolicies.byName("fcfs"), timing, 42);
    }

    private static EngineRequest request(long id, int output, long arrivalNanos) {
        return new EngineRequest(id, 64, null, output, 0, EngineRequest.NO_EOS, 0, arrivalNanos);
    }

    /**
     * Drives the engine as the simulator does: a request is submitted when it arrives (arrivals win ties with a step's
     * end), and the next step is planned once everything at the current instant was delivered. Returns each request's
     * token times.
     */
    static Map<EngineRequest, List<Long>> run(EngineCore engine, List<EngineRequest> arrivals) {
        Map<EngineRequest, List<Long>> times = new IdentityHashMap<>();
        long now = 0;
        int next = 0;
        StepPlan plan = null;
        while (true) {
            while (next < arrivals.size() && arrivals.get(next).arrivalNanos() <= now) {
                EngineRequest r = arrivals.get(next++);
                times.put(r, new ArrayList<>());
                engine.submit(r);
            }
            if (plan == null && !engine.isIdle()) {
                plan = engine.planStep(now);
            }
            long arrival = next < arrivals.size() ? arrivals.get(next).arrivalNanos() : Long.MAX_VALUE;
            long end = plan == null ? Long.MAX_VALUE : plan.endNanos();
            if (arrival == Long.MAX_VALUE && end == Long.MAX_VALUE) {
                return times;
            }
            if (arrival <= end) {
                now = arrival;
                continue;
            }
            now = end;
            StepOutcome out = engine.completeStep(plan);
            plan = null;
            for (int i = 0; i < out.tokenCount(); i++) {
                times.get(out.tokenRequest(i)).add(out.endNanos());
            }
        }
    }

    private static void assertTimeline(EngineRequest r, List<Long> tokens, long startNanos, long ttftNanos, long itlNanos) {
        assertEquals(startNanos, r.firstScheduledNanos(), r + ": scheduled");
        assertEquals(r.maxTokens(), tokens.size(), r + ": tokens");
        for (int k = 0; k < tokens.size(); k++) {
            assertEquals(startNanos + ttftNanos + k * itlNanos, tokens.get(k), r + ": token " + k);
        }
    }

    @Test
    void firstTokenAndEveryGapAreTheSettingsAtLightLoadEvenForArrivalsBetweenOtherRequestsTokens() {
        EngineCore engine = engine(4, FixedTiming.of(100, 50));
        // the second arrives between two of the first's tokens, the third after both finished
        List<EngineRequest> rs = List.of(request(1, 20, 0), request(2, 7, 137_300_001), request(3, 5, 3_000 * MS));
        Map<EngineRequest, List<Long>> times = run(engine, rs);
        for (EngineRequest r : rs) {
            assertTimeline(r, times.get(r), r.arrivalNanos(), 100 * MS, 50 * MS);
        }
    }

    @Test
    void maxNumSeqsStreamsEachKeepTheirOwnTimelineAndTheNextQueuesForTheFirstSlotToFree() {
        EngineCore engine = engine(8, FixedTiming.of(100, 50));
        List<EngineRequest> rs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            rs.add(request(i, 10 + i, i * 7_777_777L)); // staggered, so no two share a step
        }
        EngineRequest ninth = request(8, 3, 200 * MS);
        rs.add(ninth);
        Map<EngineRequest, List<Long>> times = run(engine, rs);
        for (int i = 0; i < 8; i++) {
            assertTimeline(rs.get(i), times.get(rs.get(i)), rs.get(i).arrivalNanos(), 100 * MS, 50 * MS);
        }
        long firstFree = rs.get(0).finishedNanos(); // 100 + 9 x 50 ms: request 0 ends first
        assertEquals(550 * MS, firstFree);
        assertTimeline(ninth, times.get(ninth), firstFree, 100 * MS, 50 * MS);
    }

    @Test
    void loadFactorScalesLatenciesLinearlyUpToTheFactorAtMaxNumSeqs() {
        EngineCore engine = engine(5, new FixedTiming(100, 0, 50, 0, 0, 3));
        List<EngineRequest> rs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            rs.add(request(i, 3, 0));
        }
        Map<EngineRequest, List<Long>> times = run(engine, rs);
        for (int i = 0; i < 5; i++) {
            double f = 1 + 2.0 * i / 4; // the i-th admitted sees i + 1 running
            assertEquals(Math.round(100 * f * MS), times.get(rs.get(i)).get(0), "TTFT of request " + i);
        }
        // the last first token comes at 300 ms; the fifth request's next token, all five running, is 3 x 50 ms later
        List<Long> last = times.get(rs.get(4));
        assertEquals(150 * MS, last.get(1) - last.get(0));
    }

    @Test
    void prefillTimePerTokenCountsOnlyPromptTokensMissingFromThePrefixCache() {
        EngineCore engine = engine(4, new FixedTiming(100, 0, 50, 0, 0.1, 1));
        int[] prompt = new int[1000];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = i;
        }
        EngineRequest cold = new EngineRequest(1, 1000, prompt, 2, 0, EngineRequest.NO_EOS, 0, 0);
        EngineRequest warm = new EngineRequest(2, 1000, prompt, 2, 0, EngineRequest.NO_EOS, 0, 1_000 * MS);
        Map<EngineRequest, List<Long>> times = run(engine, List.of(cold, warm));
        assertEquals(200 * MS, times.get(cold).get(0));
        int cached = warm.cachedPromptTokens();
        assertEquals(992, cached); // 62 full blocks of 16; the last token is always computed
        assertEquals(1_000 * MS + Math.round((100 + 0.1 * (1000 - cached)) * MS), times.get(warm).get(0));
    }

    @Test
    void jitterHasTheTruncatedNormalsMeanAndSpread() {
        FixedTiming timing = new FixedTiming(100, 30, 50, 15, 0, 1);
        EngineCore engine = engine(8, timing);
        List<EngineRequest> rs = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            rs.add(request(i, 10, i * 40 * MS)); // about 8 at once: 10 tokens take ~550 ms
        }
        Map<EngineRequest, List<Long>> times = run(engine, rs);
        double[] ttft = new double[rs.size()];
        List<Double> gaps = new ArrayList<>();
        for (int i = 0; i < rs.size(); i++) {
            EngineRequest r = rs.get(i);
            List<Long> t = times.get(r);
            ttft[i] = (t.get(0) - r.firstScheduledNanos()) / 1e6;
            for (int k = 1; k < t.size(); k++) {
                gaps.add((t.get(k) - t.get(k - 1)) / 1e6);
            }
        }
        assertMoments("TTFT", ttft, 100, 30);
        assertMoments("ITL", gaps.stream().mapToDouble(Double::doubleValue).toArray(), 50, 15);
    }

    /** Sample mean and standard deviation within 4 standard errors of the truncated normal's. */
    private static void assertMoments(String what, double[] xs, double mu, double sigma) {
        double mean = 0;
        for (double x : xs) {
            mean += x / xs.length;
        }
        double var = 0;
        for (double x : xs) {
            var += (x - mean) * (x - mean) / (xs.length - 1);
        }
        double expectedSd = Math.sqrt(TruncatedNormal.variance(mu, sigma));
        assertEquals(TruncatedNormal.mean(mu, sigma), mean, 4 * expectedSd / Math.sqrt(xs.length), what + " mean");
        assertEquals(expectedSd, Math.sqrt(var), 4 * expectedSd / Math.sqrt(2.0 * xs.length), what + " sd");
        for (double x : xs) {
            assertTrue(x >= 0, what + " below zero: " + x);
        }
    }

    @Test
    void truncatedNormalMomentsMatchTheirDefinition() {
        // mu = 0: the half-normal, mean sigma sqrt(2 / pi), variance sigma^2 (1 - 2 / pi)
        assertEquals(10 * Math.sqrt(2 / Math.PI), TruncatedNormal.mean(0, 10), 1e-9);
        assertEquals(100 * (1 - 2 / Math.PI), TruncatedNormal.variance(0, 10), 1e-9);
        assertEquals(50, TruncatedNormal.mean(50, 0));
        assertEquals(0, TruncatedNormal.variance(50, 0));
    }

    @Test
    void refusesNegativeLatenciesAndFactorsBelowOneNamingTheFlag() {
        ConfigException e = org.junit.jupiter.api.Assertions.assertThrows(ConfigException.class,
                () -> new FixedTiming(-1, 0, 50, 0, 0, 1));
        assertTrue(e.getMessage().startsWith("--time-to-first-token "), e.getMessage());
        e = org.junit.jupiter.api.Assertions.assertThrows(ConfigException.class, () -> new FixedTiming(1, 0, 50, 0, 0, 0.5));
        assertTrue(e.getMessage().startsWith("--time-factor-under-load "), e.getMessage());
    }
}
