package dev.infersim.bench.harness;

import dev.infersim.bench.harness.HarnessCheck.Report;
import dev.infersim.bench.harness.HarnessCheck.Verdict;
import dev.infersim.bench.harness.HarnessResults.Format;
import dev.infersim.bench.harness.HarnessResults.Measured;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The judge's mutation tests: real runs of real harnesses against {@code infersim serve --truth-log}, healthy and with
 * one bug planted in the harness's code (or in the setup: another run's truth log), each held against its truth log
 * (resources/harness/corpus, described with the planted bugs and the score in its README). Every healthy run must
 * come out clean, every mutant named by exactly the finding of its bug, first, with its cause.
 */
class HarnessCorpusTest {

    /**
     * One run of the corpus: its harness's format and result file, its truth log (another case's for a truth log of
     * another run), the verdict and the finding ids it must get, in order, and how the first one's cause begins.
     */
    record Case(String name, Format format, String result, String truth, Verdict verdict, List<String> findings,
                String cause) {
        static Case healthy(String name, Format format, String result) {
            return new Case(name, format, name + "/" + result, name + "/truth.jsonl.gz", Verdict.CLEAN, List.of(), "");
        }

        static Case mutant(String name, Format format, String result, Verdict verdict, List<String> findings, String cause) {
            return new Case(name, format, name + "/" + result, name + "/truth.jsonl.gz", verdict, findings, cause);
        }

        boolean isHealthy() {
            return findings.isEmpty();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    static final List<Case> CASES = List.of(
            Case.healthy("vllm-healthy", Format.VLLM, "result.json.gz"),
            Case.healthy("vllm-healthy-b", Format.VLLM, "result.json.gz"),
            Case.mutant("vllm-clock-late", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("clock_started_late"), "The harness starts its TTFT clock after the send"),
            Case.mutant("vllm-clock-early", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("clock_started_early"), "The harness starts its TTFT clock before the send"),
            Case.mutant("vllm-rate-high", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("rate_off_target"), "The harness sends faster than asked"),
            Case.mutant("vllm-rate-low", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("rate_off_target"), "The harness sends slower than asked"),
            Case.mutant("vllm-arrival-constant", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("arrival_process_off"), "The gaps are far more even than the requested law's"),
            Case.mutant("vllm-chunks-merged", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("token_coalescing"), "Tokens the server wrote one by one reached the harness's record together"),
            Case.mutant("vllm-chunks-split", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("chunks_split"), "The harness counts reads or partial lines as chunks"),
            Case.mutant("vllm-dropped-warmup", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("requests_dropped"), "The harness leaves its first requests out of its results"),
            Case.mutant("vllm-dropped-middle", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("requests_dropped"), "The harness drops requests from its results"),
            Case.mutant("vllm-coarse-clock", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("coarse_clock"), "The harness reads a clock of coarse resolution"),
            Case.mutant("vllm-units-ms", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("time_units"), "The harness writes its times in a smaller unit than its format says"),
            Case.mutant("vllm-wrong-tokenizer", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("output_tokens_differ"), "The harness counts output tokens itself"),
            Case.mutant("vllm-cap-ignored", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("concurrency_exceeded"), "The harness lets more requests run than its cap"),
            Case.mutant("vllm-hidden-retries", Format.VLLM, "result.json.gz", Verdict.FINDINGS,
                    List.of("hidden_retries"), "The harness (or a library under it) retries failed requests"),
            new Case("vllm-another-run", Format.VLLM, "vllm-healthy/result.json.gz", "vllm-healthy-b/truth.jsonl.gz",
                    Verdict.INCONCLUSIVE, List.of("truth_of_another_run"), "The truth log is not this run's"),
            Case.healthy("llmperf-healthy", Format.LLMPERF, "run_individual_responses.json.gz"),
            Case.mutant("llmperf-cap-ignored", Format.LLMPERF, "run_individual_responses.json.gz", Verdict.FINDINGS,
                    List.of("concurrency_exceeded"), "The harness lets more requests run than its cap"),
            Case.mutant("llmperf-wrong-tokenizer", Format.LLMPERF, "run_individual_responses.json.gz", Verdict.FINDINGS,
                    List.of("output_tokens_differ"), "The harness counts output tokens itself"),
            new Case("guidellm-constant", Format.GUIDELLM, "../guidellm-0.7.3-constant-10/result.json.gz",
                    "../guidellm-0.7.3-constant-10/truth.jsonl.gz", Verdict.CLEAN, List.of(), ""),
            new Case("aiperf", Format.AIPERF, "../aiperf-poisson-10/profile_export.jsonl.gz",
                    "../aiperf-poisson-10/truth.jsonl.gz", Verdict.CLEAN, List.of(), ""),
            new Case("guidellm-another-run", Format.GUIDELLM, "../guidellm-0.7.3-constant-10/result.json.gz",
                    "../guidellm-0.7.3-poisson-10/truth.jsonl.gz", Verdict.INCONCLUSIVE,
                    List.of("truth_of_another_run"), "The truth log is not this run's"));

    static Stream<Case> cases() {
        return CASES.stream();
    }

    /** Each case checked once: the parameterized test and the score read the same report. */
    private static final Map<Case, Report> REPORTS = new ConcurrentHashMap<>();

    static Report check(Case c) {
        return REPORTS.computeIfAbsent(c, k -> {
            try {
                return HarnessCheck.check(results(k), truth(k), results(k).target());
            } catch (URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static HarnessResults.Results results(Case c) throws URISyntaxException {
        return HarnessResults.read(c.format(), HarnessCheckTest.resource("corpus").resolve(c.result()));
    }

    private static List<TruthTimeline.Row> truth(Case c) throws URISyntaxException {
        return TruthTimeline.read(HarnessCheckTest.resource("corpus").resolve(c.truth()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void eachRunGetsExactlyTheVerdictAndFindingsOfItsBug(Case c) throws Exception {
        Report r = check(c);
        List<String> ids = r.findings().stream().map(HarnessFinding::id).toList();
        assertEquals(c.findings(), ids, c + ": " + HarnessCheck.render(r));
        assertEquals(c.verdict(), r.verdict(), c + ": " + HarnessCheck.render(r));
        if (!c.isHealthy()) {
            String cause = r.findings().get(0).cause();
            assertTrue(cause.startsWith(c.cause()), c + ": " + cause);
        }
    }

    /**
     * No clean verdict on weak evidence: every clean verdict rests on at least 95% of the harness's requests matched and
     * surely paired; each healthy run stripped of its ids and texts is clean only where that still holds, and checked
     * against its truth log with every tenth row gone (a tenth of its requests unanswerable) it is never clean.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("healthy")
    void noCleanVerdictUnderNinetyFivePercentMatched(Case c) throws Exception {
        assertSharesBackAClean(check(c));
        HarnessResults.Results results = results(c);
        HarnessResults.Results anonymous = results.withRequests(results.requests().stream().map(m -> new Measured(null,
                m.startMs(), m.firstTokenMs(), m.ttftMs(), m.e2elMs(), m.tpotMs(), m.itlsMs(), m.chunks(),
                m.promptTokens(), m.outputTokens())).toList());
        assertSharesBackAClean(HarnessCheck.check(anonymous, truth(c), results.target()));
        List<TruthTimeline.Row> thinned = new ArrayList<>(truth(c));
        thinned.sort(Comparator.comparingDouble(TruthTimeline.Row::startMs));
        for (int i = thinned.size() - 1; i >= 0; i--) {
            if (i % 10 == 5) {
                thinned.remove(i);
            }
        }
        Report r = HarnessCheck.check(results, thinned, results.target());
        assertNotEquals(Verdict.CLEAN, r.verdict(), HarnessCheck.render(r));
        assertFalse(HarnessCheck.render(r).contains("No finding"), HarnessCheck.render(r));
    }

    static Stream<Case> healthy() {
        return CASES.stream().filter(c -> c.verdict() == Verdict.CLEAN);
    }

    private static void assertSharesBackAClean(Report r) {
        if (r.verdict() == Verdict.CLEAN) {
            assertTrue(r.matching().matchedShare() >= HarnessCheck.MIN_MATCHED_SHARE
                    && r.matching().trustedShare() >= HarnessCheck.MIN_MATCHED_SHARE, HarnessCheck.render(r));
        }
    }

    /** The score the corpus README reports: every mutant named right, none misnamed or missed, no false finding. */
    @Test
    void theScoreIsEveryMutantNamedRightAndNoFalseFinding() throws Exception {
        int right = 0;
        int misnamed = 0;
        int missed = 0;
        int falseFindings = 0;
        for (Case c : CASES) {
            List<String> ids = check(c).findings().stream().map(HarnessFinding::id).toList();
            if (c.isHealthy()) {
                falseFindings += ids.size();
            } else if (ids.isEmpty()) {
                missed++;
            } else if (ids.get(0).equals(c.findings().get(0))) {
                right++;
            } else {
                misnamed++;
            }
        }
        long mutants = CASES.stream().filter(c -> !c.isHealthy()).count();
        assertEquals(List.of(mutants, 0L, 0L, 0L), List.of((long) right, (long) misnamed, (long) missed, (long) falseFindings));
    }

    /**
     * The healthy vLLM run counts prompts with a tokenizer that gives a third of the server's count: every request is
     * still matched, and the rate printed is the server's over the measured requests (its test request left out),
     * within 2% of the rate computed from the truth rows those requests are.
     */
    @Test
    void aHealthyVllmRunWithAnotherTokenizerIsMatchedWholeAndItsRateIsTheServers() throws Exception {
        Case healthy = CASES.get(0);
        Report r = check(healthy);
        assertEquals(200, r.matching().byText());
        // Each pair says how it was matched, in the harness's order.
        assertEquals(200, r.pairs().size());
        for (int i = 0; i < 200; i++) {
            HarnessCheck.PairRow p = r.pairs().get(i);
            assertEquals(i, p.harness());
            assertTrue(p.how() == RequestMatcher.How.TEXT && p.trusted() && !p.matchingError(), p.toString());
        }
        assertEquals(1.0, r.matching().trustedShare());
        assertTrue(r.counts().prompt().scale() < 0.4, r.counts().toString());
        List<TruthTimeline.Row> truth = truth(healthy);
        // The truth's own rate over its rows after the first (the test request): the run's requests.
        double[] starts = truth.stream().mapToDouble(TruthTimeline.Row::startMs).sorted().skip(1).toArray();
        double trueRate = (starts.length - 1) / ((starts[starts.length - 1] - starts[0]) / 1e3);
        assertEquals(trueRate, r.rate().perS(), 0.02 * trueRate);
        assertTrue(r.rate().low() < 10 && r.rate().high() > 10, r.rate().toString());
    }
}
