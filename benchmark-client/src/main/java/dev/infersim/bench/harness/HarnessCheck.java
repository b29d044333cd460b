package dev.infersim.bench.harness;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.infersim.bench.harness.HarnessFindings.Quantiles;
import dev.infersim.bench.harness.HarnessResults.Measured;
import dev.infersim.bench.harness.RequestMatcher.CountFit;
import dev.infersim.bench.harness.RequestMatcher.How;
import dev.infersim.bench.harness.RequestMatcher.Matching;
import dev.infersim.bench.harness.RequestMatcher.Pair;
import dev.infersim.bench.harness.TruthTimeline.Row;
import dev.infersim.result.NonFiniteAsNull;
import dev.infersim.result.ResultJson;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Holds a harness's per-request results against the server's truth at the wire ({@code infersim check-harness}):
 * matches each measured request to the choice the server timed ({@link RequestMatcher}), gives each metric's error
 * (harness minus truth, wall ms) as a distribution over the trusted pairs, the rate at which the measured requests
 * reached the server, with its interval, against the target the harness recorded, the findings of
 * {@link HarnessFindings}, and a verdict. The verdict is never clean on weak evidence. Under
 * {@value #MIN_MATCHED_SHARE} of the harness's requests matched possibly right (by identity, or by an assignment that
 * is physically possible), the check is inconclusive and the one finding is the diagnosis of why, tried in order: a
 * clock started late or early, times in another unit, a truth log of another run, requests the harness dropped,
 * requests too alike to pair. Matched, but under that share trusted (identified, or assigned unambiguously), the
 * findings that rest only on which rows the requests are (rate, arrivals, concurrency, dropped or retried requests,
 * the clock's tick) stand, and those that rest on each pair's errors are not judged: with none of the former, the check
 * is inconclusive ({@code weak_evidence}).
 *
 * <p>Before matching, the harness's time unit is checked on the decode spans (E2EL - TTFT, which a clock started
 * early or late leaves alone): 1000 or 10^6 times the server's, or the inverse, is a unit the format does not declare,
 * and the durations are judged at the corrected unit ({@code time_units}).
 */
public final class HarnessCheck {
    /**
     * Matched share below which no verdict is clean: a harness that keeps its requests' identity is matched whole; one
     * that keeps none loses the pairs it cannot tell apart (2 of 200 ambiguous for vLLM v0.6.1's run, 8 for infersim's
     * own bench without its ids), and under 95% either something other than chance is at work or the requests are too
     * alike, on too loaded a machine, to be paired (the corpus's vllm bench serve run without its texts: half).
     */
    public static final double MIN_MATCHED_SHARE = 0.95;

    /** What the check concludes. */
    public enum Verdict {
        /** Enough requests matched, no finding. */
        @JsonProperty("clean") CLEAN,
        /** Enough requests matched, and findings: the harness measured something other than what happened. */
        @JsonProperty("findings") FINDINGS,
        /** Too few requests matched to judge: the findings are the diagnosis. */
        @JsonProperty("inconclusive") INCONCLUSIVE
    }

    /**
     * One metric's error distribution, harness minus truth; NaN fields when no request has the metric (null in the
     * report's JSON).
     */
    public record ErrorSummary(int n, @NonFiniteAsNull double min, @NonFiniteAsNull double p50, @NonFiniteAsNull double p99, @NonFiniteAsNull double max) {
        static ErrorSummary of(double[] errors) {
            if (errors.length == 0) {
                return new ErrorSummary(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
            }
            Quantiles q = Quantiles.of(errors);
            return new ErrorSummary(errors.length, Arrays.stream(errors).min().orElseThrow(), q.p50(), q.p99(), q.max());
        }
    }

    /**
     * How the harness's requests were matched to the server's truth rows: how many by request id, by output text and
     * by assignment (ambiguous ones and matching errors, a negative TTFT or E2EL error, among the assigned), the share
     * of the harness's requests matched possibly right ({@code matched_share}: all but the matching errors), how many
     * per-request findings may rest on ({@code trusted}: identified, or assigned unambiguously) and their share, the
     * truth rows (those before the
     * first matched request: test or warm-up requests; the others left unmatched), and the harness's requests without a
     * truth row and failed in the harness.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record MatchSummary(int harnessRequests, int matched, int byId, int byText, int byAssignment, int ambiguous,
                               int matchingErrors, double matchedShare, int trusted, double trustedShare, int truthRows,
                               @JsonProperty("truth_before_first_matched") int truthBeforeFirst, int truthOtherUnmatched,
                               @JsonProperty("harness_unmatched") int unmatched,
                               @JsonProperty("harness_failed") int failed) {
    }

    /**
     * The harness's token counts fitted to the server's ({@link CountFit}: harness = scale x server), output and
     * prompt.
     */
    public record Counts(CountFit output, CountFit prompt) {
    }

    /**
     * The check, as {@code check-harness --json} writes it and reads back: the verdict, the matching, per-metric errors
     * over the trusted pairs at the wire (keys {@code ttft_ms}, {@code tpot_ms}, {@code e2el_ms}, {@code itl_mean_ms},
     * {@code itl_count}, {@code output_tokens}, {@code prompt_tokens}, and where the format has the instants
     * {@code ttft_before_send_ms} and {@code ttft_after_first_token_ms}), what the truth charges to the server rather
     * than the harness ({@code ingest_ms}: reading, parsing and tokenizing before the engine had the request;
     * {@code received_lateness_bound_ms}: the mock's upper bound on how long the request's head waited in its socket
     * before it was read, shown, not subtracted: under load it is loose (tens of ms where the floor of the harness's
     * error is 1 or 2);
     * {@code first_token_write_lateness_ms}: the first token's chunk written after the engine made it), the rate of
     * the measured requests at the server, the count fits, the target, the findings, and each pair and how it was
     * matched. NaN is null in the JSON.
     */
    public record Report(Verdict verdict, MatchSummary matching, Map<String, ErrorSummary> errors,
                         @JsonProperty("server_ms") Map<String, ErrorSummary> server, HarnessRate rate, Counts counts,
                         HarnessTarget target, List<HarnessFinding> findings, List<PairRow> pairs) {
    }

    /**
     * One matched request: its place among the harness's measured requests (as its file lists them), the truth row's
     * request id and choice index, how it was matched, whether it was ambiguous, a matching error (assigned, and the
     * harness would have seen a token before the server wrote it) or trusted (findings and errors rest on it), and its
     * TTFT and E2EL errors (harness minus truth at the wire, ms).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record PairRow(int harness, String requestId, int index, How how, boolean ambiguous, boolean matchingError,
                          boolean trusted, @NonFiniteAsNull double ttftErrorMs, @NonFiniteAsNull double e2elErrorMs) {
        static List<PairRow> of(List<Measured> measured, List<Pair> pairs) {
            Map<Measured, Integer> place = new java.util.IdentityHashMap<>();
            for (int i = 0; i < measured.size(); i++) {
                place.put(measured.get(i), i);
            }
            return pairs.stream().sorted(java.util.Comparator.comparingInt(p -> place.get(p.m())))
                    .map(p -> new PairRow(place.get(p.m()), p.t().requestId(), p.t().index(), p.how(), p.ambiguous(),
                            !p.identified() && !p.physical(), p.trusted(), p.ttftErrorMs(), p.e2elErrorMs()))
                    .toList();
        }
    }

    private HarnessCheck() {
    }

    /** {@code target}: what the harness was asked for (its result's own, or the command line's). */
    public static Report check(HarnessResults.Results results, List<Row> truth, HarnessTarget target) {
        double factor = unitsFactor(results.requests(), truth);
        HarnessResults.Results judged = factor == 1 ? results
                : results.withRequests(results.requests().stream().map(m -> m.durationsTimes(factor)).toList());
        Matching matching = RequestMatcher.match(judged.requests(), truth, judged.listed());
        List<Pair> trusted = matching.trusted();
        int measured = judged.requests().size();
        double matched = measured == 0 ? 0 : (double) matching.possible() / measured;
        double share = measured == 0 ? 0 : (double) trusted.size() / measured;
        List<Pair> unconstrained = share < MIN_MATCHED_SHARE && matching.count(How.ID) + matching.count(How.TEXT) == 0
                ? RequestMatcher.match(judged.requests(), truth, judged.listed(), false).pairs() : List.of();
        HarnessFindings.Context context = new HarnessFindings.Context(matching, judged, target, factor, unconstrained);
        List<HarnessFinding> findings;
        Verdict verdict;
        HarnessFinding coarse = HarnessFindings.coarseClock(judged.requests());
        HarnessFinding otherRun = HarnessFindings.identifiedPairsOfAnotherRun(matching.pairs(),
                coarse == null ? 0 : coarse.evidence().get("tick_ms"));
        if (otherRun != null) {
            // Identified, but by texts another run of the mock generated alike: nothing can be judged against it.
            findings = List.of(otherRun);
            verdict = Verdict.INCONCLUSIVE;
        } else if (matched < MIN_MATCHED_SHARE) {
            findings = HarnessFindings.diagnose(context);
            verdict = Verdict.INCONCLUSIVE;
        } else if (share < MIN_MATCHED_SHARE) {
            // The right rows, but not surely which is which: what rests on the set of rows stands, the rest is not judged.
            findings = HarnessFindings.find(context).stream()
                    .filter(f -> !HarnessFindings.PER_PAIR.contains(f.id())).toList();
            verdict = findings.isEmpty() ? Verdict.INCONCLUSIVE : Verdict.FINDINGS;
            if (findings.isEmpty()) {
                findings = List.of(HarnessFindings.weakEvidence(matching));
            }
        } else {
            findings = HarnessFindings.find(context);
            verdict = findings.isEmpty() ? Verdict.CLEAN : Verdict.FINDINGS;
        }
        MatchSummary summary = new MatchSummary(measured, matching.pairs().size(), (int) matching.count(How.ID),
                (int) matching.count(How.TEXT), (int) matching.count(How.ASSIGNMENT), matching.ambiguous(),
                matching.matchingErrors(), matched, trusted.size(), share, truth.size(), matching.truthBeforeFirst(),
                matching.truthOtherUnmatched(), matching.unmatchedMeasured(), judged.failed());
        return new Report(verdict, summary, errors(trusted), server(matching.pairs()),
                HarnessRate.of(HarnessFindings.arrivals(matching)), new Counts(matching.outputFit(), matching.promptFit()),
                target, findings, PairRow.of(judged.requests(), matching.pairs()));
    }

    /**
     * The factor the harness's durations are off by a power of 1000 (10^-6, 10^-3, 10^3, 10^6 within a factor of 3), as
     * its decode spans against the server's show them (on identity pairs where there are three or more, else the
     * medians of both sides); 1 when none.
     */
    static double unitsFactor(List<Measured> measured, List<Row> truth) {
        double[] ratios = RequestMatcher.identityPairs(measured, truth).stream()
                .filter(p -> p.t().decodeMs() > 0 && p.m().e2elMs() - p.m().ttftMs() > 0)
                .mapToDouble(p -> (p.m().e2elMs() - p.m().ttftMs()) / p.t().decodeMs()).toArray();
        double ratio;
        if (ratios.length >= 3) {
            ratio = RequestMatcher.median(ratios);
        } else {
            double[] spans = measured.stream().mapToDouble(m -> m.e2elMs() - m.ttftMs()).filter(v -> v > 0).toArray();
            double[] server = truth.stream().mapToDouble(Row::decodeMs).filter(v -> v > 0).toArray();
            if (spans.length == 0 || server.length == 0) {
                return 1;
            }
            ratio = RequestMatcher.median(spans) / RequestMatcher.median(server);
        }
        for (double f : new double[]{1e-6, 1e-3, 1e3, 1e6}) {
            if (Math.abs(Math.log10(ratio / f)) < Math.log10(3)) {
                return 1 / f;
            }
        }
        return 1;
    }

    private static Map<String, ErrorSummary> errors(List<Pair> trusted) {
        Map<String, ErrorSummary> errors = new LinkedHashMap<>();
        errors.put("ttft_ms", summary(trusted, Pair::ttftErrorMs));
        errors.put("tpot_ms", summary(trusted, p -> p.m().tpotMs() - p.t().tpotMs()));
        errors.put("e2el_ms", summary(trusted, Pair::e2elErrorMs));
        errors.put("itl_mean_ms", summary(trusted, p -> p.m().itlsMs() == null || p.m().itlsMs().length == 0
                || p.t().gaps() == 0 ? Double.NaN : HarnessFindings.mean(p.m().itlsMs()) - p.t().tpotMs()));
        errors.put("itl_count", summary(trusted, p -> p.m().itlsMs() == null ? Double.NaN
                : p.m().itlsMs().length - p.t().gaps()));
        errors.put("output_tokens", summary(trusted, p -> p.m().outputTokens() < 0 ? Double.NaN
                : p.m().outputTokens() - p.t().completionTokens()));
        errors.put("prompt_tokens", summary(trusted, p -> p.m().promptTokens() < 0 ? Double.NaN
                : p.m().promptTokens() - p.t().promptTokens()));
        if (trusted.stream().anyMatch(p -> Double.isFinite(p.beforeSendMs()) && Double.isFinite(p.afterFirstTokenMs()))) {
            errors.put("ttft_before_send_ms", summary(trusted, Pair::beforeSendMs));
            errors.put("ttft_after_first_token_ms", summary(trusted, Pair::afterFirstTokenMs));
        }
        return errors;
    }

    private static Map<String, ErrorSummary> server(List<Pair> pairs) {
        Map<String, ErrorSummary> server = new LinkedHashMap<>();
        server.put("ingest_ms", summary(pairs, p -> Double.isFinite(p.t().receivedMs()) ? p.t().ingestMs() : Double.NaN));
        server.put("received_lateness_bound_ms", summary(pairs, p -> p.t().receivedLatenessMs()));
        server.put("first_token_write_lateness_ms", summary(pairs, p -> Double.isFinite(p.t().firstWrittenMs())
                ? p.t().firstWrittenMs() - p.t().firstTokenMs() : Double.NaN));
        return server;
    }

    private static ErrorSummary summary(List<Pair> pairs, ToDoubleFunction<Pair> error) {
        return ErrorSummary.of(pairs.stream().mapToDouble(error).filter(e -> !Double.isNaN(e)).toArray());
    }

    /** The report as console lines. */
    public static String render(Report report) {
        MatchSummary r = report.matching();
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "Matched %d of %d harness requests to the truth: %d by request id, %d by output "
                        + "text, %d by assignment on time and fitted counts (%d ambiguous, %d matching errors: negative TTFT "
                        + "or E2EL); %.1f%% matched, %.1f%% trusted (%d: errors and findings use these; a verdict needs "
                        + "%.0f%%)%n", r.matched(), r.harnessRequests(), r.byId(), r.byText(), r.byAssignment(), r.ambiguous(),
                r.matchingErrors(), 100 * r.matchedShare(), 100 * r.trustedShare(), r.trusted(), 100 * MIN_MATCHED_SHARE));
        s.append(String.format(Locale.ROOT, "Truth rows %d: %d before the first matched request (test or warm-up "
                        + "requests), %d others unmatched; harness requests without a truth row %d; failed in the harness %d%n",
                r.truthRows(), r.truthBeforeFirst(), r.truthOtherUnmatched(), r.unmatched(), r.failed()));
        s.append(String.format(Locale.ROOT, "%-29s %6s %11s %11s %11s %11s%n", "harness - truth at the wire", "n", "min",
                "p50", "p99", "max"));
        report.errors().forEach((metric, e) -> row(s, metric, e));
        s.append("Charged to the server, not the harness:\n");
        report.server().forEach((metric, e) -> row(s, metric, e));
        Counts c = report.counts();
        s.append(String.format(Locale.ROOT, "Token counts, harness per server token (fitted): output %s, prompt %s%n",
                fit(c.output()), fit(c.prompt())));
        HarnessRate rate = report.rate();
        s.append(String.format(Locale.ROOT, "Rate at the server over the %d measured requests: %s req/s (95%% interval %s "
                        + "to %s); asked: %s%n", rate.arrivals(), num(rate.perS()), num(rate.low()), num(rate.high()),
                report.target().describe()));
        switch (report.verdict()) {
            case CLEAN -> s.append("No finding: the harness measured what the server did, within the thresholds.\n");
            case FINDINGS -> s.append(String.format(Locale.ROOT, "%d finding%s: the harness's numbers differ from what "
                    + "the server did.%n", report.findings().size(), report.findings().size() == 1 ? "" : "s"));
            case INCONCLUSIVE -> s.append(inconclusive(r, report.findings().isEmpty())).append('\n');
        }
        for (HarnessFinding f : report.findings()) {
            s.append("Finding ").append(f.id()).append(": ").append(f.summary()).append('\n');
            s.append("  cause: ").append(f.cause()).append('\n');
        }
        return s.toString();
    }

    /** Why no verdict: too few matched, too few surely paired, or matched to another run's texts. */
    private static String inconclusive(MatchSummary r, boolean noCause) {
        if (r.matchedShare() < MIN_MATCHED_SHARE) {
            return String.format(Locale.ROOT, "Not judged: %d of %d harness requests (%.1f%%) could be matched to the "
                            + "truth, under %.0f%%. %s", r.matched() - r.matchingErrors(), r.harnessRequests(),
                    100 * r.matchedShare(), 100 * MIN_MATCHED_SHARE, noCause ? "No cause found: a clock that started "
                            + "late or early, times in another unit, a truth log of another run and dropped requests were "
                            + "each looked for and not seen." : "Diagnosis:");
        }
        if (r.trustedShare() < MIN_MATCHED_SHARE) {
            return String.format(Locale.ROOT, "Not judged: only %d of %d harness requests (%.1f%%) are surely paired "
                            + "with their truth row, under %.0f%%, and nothing that rests on the matched rows alone was "
                            + "found. Diagnosis:", r.trusted(), r.harnessRequests(), 100 * r.trustedShare(),
                    100 * MIN_MATCHED_SHARE);
        }
        return "Not judged: the harness's requests are in the truth log, but not as this run timed them. Diagnosis:";
    }

    private static void row(StringBuilder s, String metric, ErrorSummary e) {
        s.append(String.format(Locale.ROOT, "%-29s %6d %11s %11s %11s %11s%n", metric, e.n(), num(e.min()), num(e.p50()),
                num(e.p99()), num(e.max())));
    }

    private static String fit(CountFit f) {
        return Double.isNaN(f.scale()) ? "-" : String.format(Locale.ROOT, "%.3f (spread %.1f tokens)", f.scale(),
                f.spread());
    }

    /** The report as JSON ({@link Report}); see {@link #read} for the way back. */
    public static String toJson(Report r) {
        return ResultJson.text(r);
    }

    /**
     * A report {@link #toJson} wrote, read back whole (its {@code errors} are not vLLM's per-request array of that
     * name, which result readers leave out).
     */
    public static Report read(Path file) {
        return ResultJson.convert(ResultJson.readWhole(file), Report.class);
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "-" : Double.isInfinite(v) ? "inf" : String.format(Locale.ROOT, "%.3f", v);
    }
}
