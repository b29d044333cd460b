package dev.infersim.bench;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.infersim.bench.HarnessFindings.Quantiles;
import dev.infersim.bench.RequestMatcher.Matching;
import dev.infersim.bench.RequestMatcher.Pair;
import dev.infersim.bench.TruthTimeline.Row;
import dev.infersim.result.NonFiniteAsNull;
import dev.infersim.result.ResultJson;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Holds a harness's per-request results against the server's truth ({@code infersim check-harness}): matches each
 * measured request to the choice the server timed ({@link RequestMatcher}), gives each metric's error (harness minus
 * truth, wall ms) as a distribution over the trusted pairs, the rate the server actually saw against the target the
 * harness recorded, and the findings of {@link HarnessFindings}.
 */
public final class HarnessCheck {
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
            return new ErrorSummary(errors.length, java.util.Arrays.stream(errors).min().orElseThrow(), q.p50(), q.p99(),
                    q.max());
        }
    }

    /**
     * How the harness's requests were matched to the server's truth rows: by what, how many pairs (ambiguous ones and
     * matching errors, a negative TTFT or E2EL error, among them), the truth rows (those before the first matched
     * request: test or warm-up requests; the others left unmatched), and the harness's requests without a truth row
     * and failed in the harness.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record MatchSummary(String method, int matched, int ambiguous, int matchingErrors, int truthRows,
                           @JsonProperty("truth_before_first_matched") int truthBeforeFirst, int truthOtherUnmatched,
                           @JsonProperty("harness_unmatched") int unmatched,
                           @JsonProperty("harness_failed") int failed) {
    }

    /**
     * The check, as {@code check-harness --json} writes it and reads back: the matching, per-metric errors over the
     * trusted pairs (keys {@code ttft_ms}, {@code tpot_ms}, {@code e2el_ms}, {@code itl_mean_ms}, {@code itl_count},
     * {@code output_tokens}, {@code prompt_tokens}, and where the format has the instants {@code ttft_before_send_ms}
     * and {@code ttft_after_first_token_ms}), the arrival rate at the server over the matched requests, the target,
     * and the findings. NaN is null in the JSON.
     */
    public record Report(MatchSummary matching, Map<String, ErrorSummary> errors,
                         @JsonProperty("achieved_rate_per_s") @NonFiniteAsNull double achievedRate, HarnessTarget target,
                         List<HarnessFinding> findings) {
    }

    private HarnessCheck() {
    }

    /** {@code target}: what the harness was asked for (its result's own, or the command line's). */
    public static Report check(HarnessResults.Results results, List<Row> truth, HarnessTarget target) {
        Matching matching = RequestMatcher.match(results.requests(), truth);
        List<Pair> trusted = matching.trusted();
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
        if (trusted.stream().anyMatch(p -> Double.isFinite(p.m().startMs()) && Double.isFinite(p.m().firstTokenMs()))) {
            errors.put("ttft_before_send_ms", summary(trusted, p -> p.t().arrivalMs() - p.m().startMs()));
            errors.put("ttft_after_first_token_ms", summary(trusted, p -> p.m().firstTokenMs() - p.t().firstTokenMs()));
        }
        double[] arrivals = matching.pairs().stream().mapToDouble(p -> p.t().arrivalMs()).sorted().toArray();
        List<HarnessFinding> findings = HarnessFindings.find(matching, results, target);
        return new Report(new MatchSummary(matching.method(), matching.pairs().size(), matching.ambiguous(),
                matching.matchingErrors(), matching.truthRows(), matching.truthBeforeFirst(), matching.truthOtherUnmatched(),
                matching.unmatchedMeasured(), results.failed()), errors, HarnessFindings.achievedRate(arrivals), target,
                findings);
    }

    private static ErrorSummary summary(List<Pair> pairs, ToDoubleFunction<Pair> error) {
        return ErrorSummary.of(pairs.stream().mapToDouble(error).filter(e -> !Double.isNaN(e)).toArray());
    }

    /** The report as console lines. */
    public static String render(Report report) {
        MatchSummary r = report.matching();
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "Matched %d requests to the truth by %s: %d ambiguous, %d matching errors "
                        + "(negative TTFT or E2EL error); findings and errors use the other %d%n", r.matched(), r.method(),
                r.ambiguous(), r.matchingErrors(), trustedCount(report)));
        s.append(String.format(Locale.ROOT, "Truth rows %d: %d before the first matched request (test or warm-up "
                        + "requests), %d others unmatched; harness requests without a truth row %d; failed in the harness %d%n",
                r.truthRows(), r.truthBeforeFirst(), r.truthOtherUnmatched(), r.unmatched(), r.failed()));
        s.append(String.format(Locale.ROOT, "%-25s %6s %11s %11s %11s %11s%n", "harness-truth", "n", "min", "p50", "p99", "max"));
        report.errors().forEach((metric, e) -> s.append(String.format(Locale.ROOT, "%-25s %6d %11s %11s %11s %11s%n", metric,
                e.n(), num(e.min()), num(e.p50()), num(e.p99()), num(e.max()))));
        s.append(String.format(Locale.ROOT, "Rate at the server: %s req/s; asked: %s%n", num(report.achievedRate()),
                report.target().describe()));
        if (report.findings().isEmpty()) {
            s.append("No finding: the harness measured what the server did, within the thresholds.\n");
        }
        for (HarnessFinding f : report.findings()) {
            s.append("Finding ").append(f.id()).append(": ").append(f.summary()).append('\n');
            s.append("  cause: ").append(f.cause()).append('\n');
        }
        return s.toString();
    }

    private static int trustedCount(Report r) {
        return r.errors().get("ttft_ms").n();
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
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.3f", v);
    }
}
