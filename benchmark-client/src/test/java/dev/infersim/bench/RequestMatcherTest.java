package dev.infersim.bench;

import dev.infersim.bench.HarnessResults.Format;
import dev.infersim.bench.HarnessResults.Measured;
import dev.infersim.bench.RequestMatcher.Matching;
import dev.infersim.bench.RequestMatcher.Pair;
import dev.infersim.bench.TruthTimeline.Row;
import dev.infersim.common.SplitMix64;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Matching measured requests to truth rows: by id, and by exact assignment where no id is kept. */
class RequestMatcherTest {

    /** A truth row: first token {@code ttft} ms after arrival, then a token every {@code gap} ms. */
    static Row row(String id, double arrival, double ttft, double gap, int tokens, int prompt) {
        double[] times = new double[tokens];
        for (int k = 0; k < tokens; k++) {
            times[k] = arrival + ttft + k * gap;
        }
        return new Row(id, 0, arrival, times[0], times[tokens - 1], times, prompt, tokens, "length");
    }

    /** What a harness measures of a row: its clock starts {@code before} ms ahead of the arrival, tokens read on time. */
    static Measured measured(Row t, String id, double before, boolean withStart) {
        double[] itls = new double[t.gaps()];
        for (int k = 0; k < itls.length; k++) {
            itls[k] = t.tokenTimesMs()[k + 1] - t.tokenTimesMs()[k];
        }
        double start = t.arrivalMs() - before;
        return new Measured(id, withStart ? start : Double.NaN, withStart ? t.firstTokenMs() : Double.NaN,
                t.ttftMs() + before, t.e2elMs() + before, t.tpotMs(), itls, t.completionTokens(), t.promptTokens(),
                t.completionTokens());
    }

    private static Row rowOf(Matching m, Measured measured) {
        return m.pairs().stream().filter(p -> p.m() == measured).map(Pair::t).findFirst().orElseThrow();
    }

    @Test
    void requestsThatSwapOrderAtTheServerAreToldApartByTheirLengths() {
        Row a = row("a", 1000.3, 20, 8, 8, 30);
        Row b = row("b", 1000.0, 20, 8, 12, 24);
        // Sent a then b (the harness's order); b reached the server 0.3 ms first.
        Measured ma = measured(a, null, 1, false);
        Measured mb = measured(b, null, 1, false);
        Matching m = RequestMatcher.match(List.of(ma, mb), List.of(b, a));
        assertEquals("assignment on send order, decode span and token counts", m.method());
        assertEquals(a, rowOf(m, ma));
        assertEquals(b, rowOf(m, mb));
        assertEquals(0, m.ambiguous());
    }

    @Test
    void pairsThatNothingTellsApartAreAmbiguousAndNotTrusted() {
        Row a = row("a", 1000.0, 20, 8, 8, 30);
        Row b = row("b", 1000.2, 20, 8, 8, 30);
        Matching m = RequestMatcher.match(List.of(measured(a, null, 1, false), measured(b, null, 1, false)), List.of(a, b));
        assertEquals(2, m.pairs().size());
        assertEquals(2, m.ambiguous());
        assertTrue(m.trusted().isEmpty());
    }

    @Test
    void aTestRequestAheadOfTheRunIsLeftOutNotPairedWithTheFirstMeasured() {
        // vLLM's benchmark_serving.py sends its first prompt once as a test before the run, uncounted.
        Row test = row("test", 500, 20, 8, 10, 30);
        List<Row> truth = new ArrayList<>(List.of(test));
        List<Measured> ms = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Row r = row("r" + i, 1000 + 50 * i, 20, 8, 10 + i, 30 - i);
            truth.add(r);
            ms.add(measured(r, null, 1, false));
        }
        Matching m = RequestMatcher.match(ms, truth);
        assertEquals(1, m.truthBeforeFirst());
        for (int i = 0; i < 5; i++) {
            assertEquals("r" + i, rowOf(m, ms.get(i)).requestId());
        }
    }

    @Test
    void theServerRequestIdMatchesExactlyWhereTheFormatKeepsIt() {
        Row a = row("a", 1000.0, 20, 8, 8, 30);
        Row b = row("b", 1000.2, 20, 8, 8, 30);
        Measured mb = measured(b, "b", 1, true);
        Measured ma = measured(a, "a", 1, true);
        Matching m = RequestMatcher.match(List.of(mb, ma), List.of(a, b));
        assertEquals("request id", m.method());
        assertEquals(a, rowOf(m, ma));
        assertEquals(0, m.ambiguous());
        assertEquals("340512f6467b8d1de20893eef68c0f62", HarnessResults.serverRequestId("chatcmpl-340512f6467b8d1de20893eef68c0f62"));
        assertEquals("74dc5806", HarnessResults.serverRequestId("cmpl-74dc5806"));
    }

    @Test
    void aNegativeTtftErrorIsAMatchingErrorNeverAFinding() {
        Row a = row("a", 1000.0, 20, 8, 8, 30);
        Measured early = new Measured("a", Double.NaN, Double.NaN, 15, a.e2elMs() + 1, a.tpotMs(), null, -1, 30, 8);
        Matching m = RequestMatcher.match(List.of(early), List.of(a));
        assertEquals(1, m.matchingErrors());
        assertTrue(m.trusted().isEmpty());
    }

    @Test
    void onARealRunEveryPairTheAssignmentTrustsIsThePairTheIdsName() throws Exception {
        // infersim's own bench keeps the server's ids: without them, every pair the assignment trusts must be right.
        Path dir = HarnessCheckTest.resource("infersim-bench-poisson-20");
        List<Measured> withIds = HarnessResults.read(Format.VLLM, dir.resolve("bench.json.gz")).requests();
        List<Measured> without = withIds.stream().map(m -> new Measured(null, m.startMs(), m.firstTokenMs(), m.ttftMs(),
                m.e2elMs(), m.tpotMs(), m.itlsMs(), m.chunks(), m.promptTokens(), m.outputTokens())).toList();
        Matching m = RequestMatcher.match(without, TruthTimeline.read(dir.resolve("truth.jsonl.gz")));
        assertEquals(200, m.pairs().size());
        int wrong = 0;
        int wrongTrusted = 0;
        for (int i = 0; i < without.size(); i++) {
            Measured w = without.get(i);
            Pair p = m.pairs().stream().filter(x -> x.m() == w).findFirst().orElseThrow();
            if (!p.t().requestId().equals(withIds.get(i).requestId())) {
                wrong++;
                wrongTrusted += p.trusted() ? 1 : 0;
            }
        }
        // Four pairs of neighbours swapped order at the server, with the same lengths: nothing tells them apart.
        assertEquals(8, wrong);
        assertEquals(0, wrongTrusted, "a finding could rest on a wrong pair");
        assertTrue(m.ambiguous() >= wrong && m.ambiguous() < 50, m.ambiguous() + " ambiguous");
    }

    @Test
    void hungarianFindsTheMinimumCostAssignment() {
        SplitMix64 rng = new SplitMix64(3);
        for (int trial = 0; trial < 20; trial++) {
            double[][] a = new double[5][7];
            for (double[] r : a) {
                for (int j = 0; j < r.length; j++) {
                    r[j] = Math.floor(rng.nextDouble() * 100);
                }
            }
            int[] chosen = RequestMatcher.hungarian(a);
            double got = 0;
            boolean[] used = new boolean[7];
            for (int i = 0; i < 5; i++) {
                assertFalse(used[chosen[i]]);
                used[chosen[i]] = true;
                got += a[i][chosen[i]];
            }
            assertEquals(bruteForce(a, 0, new boolean[7]), got, 1e-9);
        }
    }

    private static double bruteForce(double[][] a, int row, boolean[] used) {
        if (row == a.length) {
            return 0;
        }
        double best = Double.POSITIVE_INFINITY;
        for (int j = 0; j < a[row].length; j++) {
            if (!used[j]) {
                used[j] = true;
                best = Math.min(best, a[row][j] + bruteForce(a, row + 1, used));
                used[j] = false;
            }
        }
        return best;
    }
}
