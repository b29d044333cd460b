package dev.infersim.bench.harness;

import dev.infersim.bench.harness.HarnessResults.Format;
import dev.infersim.bench.harness.HarnessResults.Measured;
import dev.infersim.bench.harness.RequestMatcher.How;
import dev.infersim.bench.harness.RequestMatcher.Matching;
import dev.infersim.bench.harness.RequestMatcher.Pair;
import dev.infersim.bench.harness.TruthTimeline.Row;
import dev.infersim.common.SplitMix64;
import dev.infersim.common.TextKey;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Matching measured requests to truth rows: by id, by the generated text, and by exact assignment on time and fitted
 * counts where neither is kept.
 */
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
        assertEquals(2, m.count(How.ASSIGNMENT));
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
        assertEquals(2, m.count(How.ID));
        assertEquals(a, rowOf(m, ma));
        assertEquals(0, m.ambiguous());
        assertEquals("340512f6467b8d1de20893eef68c0f62", HarnessResults.serverRequestId("chatcmpl-340512f6467b8d1de20893eef68c0f62"));
        assertEquals("74dc5806", HarnessResults.serverRequestId("cmpl-74dc5806"));
    }

    @Test
    void aNegativeErrorOnAnAssignedPairIsAMatchingErrorButOnAnIdentifiedOneItIsTheHarnesss() {
        Row a = row("a", 1000.0, 20, 8, 8, 30);
        Measured early = new Measured(null, Double.NaN, Double.NaN, 15, a.e2elMs() + 1, a.tpotMs(), null, -1, 30, 8);
        Matching assigned = RequestMatcher.match(List.of(early), List.of(a), HarnessResults.Listed.BY_SEND, false);
        assertEquals(1, assigned.matchingErrors());
        assertTrue(assigned.trusted().isEmpty());
        // The physical assignment does not take the pair at all.
        assertEquals(0, RequestMatcher.match(List.of(early), List.of(a)).pairs().size());
        Measured named = new Measured("a", Double.NaN, Double.NaN, 15, a.e2elMs() + 1, a.tpotMs(), null, -1, 30, 8);
        Matching byId = RequestMatcher.match(List.of(named), List.of(a));
        assertEquals(0, byId.matchingErrors());
        assertEquals(1, byId.trusted().size());
        assertEquals(-5, byId.trusted().get(0).ttftErrorMs(), 1e-9);
    }

    @Test
    void theGeneratedTextMatchesExactlyWhereNoIdIsKeptAndARequestWhoseIdentityIsInNoRowIsLeftOut() {
        Row a = keyed(row("a", 1000.0, 20, 8, 8, 30), " made state city");
        Row b = keyed(row("b", 1000.2, 20, 8, 8, 30), " river stone is");
        // Same lengths and times: only the text tells them apart; harnesses strip or re-join the text.
        Measured mb = withText(measured(b, null, 1, false), "river stone is");
        Measured ma = withText(measured(a, null, 1, false), " made\nstate city ");
        Measured elsewhere = withText(measured(a, null, 1, false), " another run's text");
        Matching m = RequestMatcher.match(List.of(mb, ma, elsewhere), List.of(a, b));
        assertEquals(2, m.count(How.TEXT));
        assertEquals(a, rowOf(m, ma));
        assertEquals(b, rowOf(m, mb));
        assertEquals(1, m.unmatchedMeasured(), "a text that no row has is not this log's request");
        assertEquals(0, m.ambiguous());
    }

    @Test
    void countsFromAnotherTokenizerAreFittedNotChargedAsDifferences() {
        // The harness counts prompts at a third and outputs at 0.9 of the server's (its own tokenizer), with noise;
        // neighbours differ in length and swap order at the server. Raw differences would pair the longest harness
        // prompts with the shortest rows.
        SplitMix64 rng = new SplitMix64(11);
        List<Row> truth = new ArrayList<>();
        List<Measured> ms = new ArrayList<>();
        double arrival = 1000;
        for (int i = 0; i < 200; i++) {
            arrival += 20 + 60 * rng.nextDouble();
            int prompt = 40 + (int) (rng.nextDouble() * 200);
            int output = 6 + (int) (rng.nextDouble() * 12);
            Row t = row("r" + i, arrival, 20 + 10 * rng.nextDouble(), 8, output, prompt);
            truth.add(t);
            Measured exact = measured(t, null, 1 + rng.nextDouble(), false);
            ms.add(new Measured(null, Double.NaN, Double.NaN, exact.ttftMs(), exact.e2elMs(), exact.tpotMs(),
                    exact.itlsMs(), exact.chunks(), (int) Math.round(prompt / 3.0 + rng.nextDouble() * 4 - 2),
                    (int) Math.round(0.9 * output + rng.nextDouble() - 0.5)));
        }
        Matching m = RequestMatcher.match(ms, truth);
        assertEquals(200, m.pairs().size());
        for (int i = 0; i < ms.size(); i++) {
            Measured mi = ms.get(i);
            Pair p = m.pairs().stream().filter(x -> x.m() == mi).findFirst().orElseThrow();
            assertTrue(!p.trusted() || p.t() == truth.get(i), "request " + i + " trusted with another's row");
        }
        assertTrue(m.trusted().size() >= 190, m.trusted().size() + " trusted");
        assertEquals(1 / 3.0, m.promptFit().scale(), 0.02);
        assertEquals(0.9, m.outputFit().scale(), 0.05);
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
    void aHealthyVllmRunWhoseTokenizerDiffersIsPairedRightByTimeAndFittedCountsWithoutItsTexts() throws Exception {
        // The corpus's healthy vllm bench serve run: its tokenizer counts prompts at a third of the server's. Its texts
        // name every pair; without them, the assignment must trust no wrong pair.
        Path dir = HarnessCheckTest.resource("corpus/vllm-healthy");
        List<Measured> withTexts = HarnessResults.read(Format.VLLM, dir.resolve("result.json.gz")).requests();
        List<Row> truth = TruthTimeline.read(dir.resolve("truth.jsonl.gz"));
        Matching exact = RequestMatcher.match(withTexts, truth);
        assertEquals(200, exact.count(How.TEXT));
        List<Measured> without = withTexts.stream().map(m -> new Measured(null, m.startMs(), m.firstTokenMs(), m.ttftMs(),
                m.e2elMs(), m.tpotMs(), m.itlsMs(), m.chunks(), m.promptTokens(), m.outputTokens())).toList();
        Matching m = RequestMatcher.match(without, truth);
        int wrongTrusted = 0;
        for (int i = 0; i < without.size(); i++) {
            Measured w = without.get(i);
            Row right = rowOf(exact, withTexts.get(i));
            Pair p = m.pairs().stream().filter(x -> x.m() == w).findFirst().orElseThrow();
            wrongTrusted += p.trusted() && p.t() != right ? 1 : 0;
        }
        assertEquals(0, wrongTrusted);
        // On the loaded machine the run was made on, its TTFTs spread by hundreds of ms: without the texts, half of the
        // requests cannot be told from a neighbour, and are left untrusted rather than guessed.
        assertTrue(m.trusted().size() >= 90, m.trusted().size() + " trusted");
    }

    private static Row keyed(Row r, String text) {
        return new Row(r.requestId(), r.index(), r.arrivalMs(), r.firstTokenMs(), r.finishedMs(), r.tokenTimesMs(),
                r.promptTokens(), r.completionTokens(), r.finishReason(), Double.NaN, Double.NaN, Double.NaN, Double.NaN, null,
                TextKey.of(text), null, 1);
    }

    private static Measured withText(Measured m, String text) {
        return new Measured(m.requestId(), m.startMs(), m.firstTokenMs(), m.ttftMs(), m.e2elMs(), m.tpotMs(), m.itlsMs(),
                m.chunks(), m.promptTokens(), m.outputTokens(), TextKey.of(text));
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
