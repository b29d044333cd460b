package dev.infersim.bench;

import dev.infersim.bench.HarnessResults.Measured;
import dev.infersim.bench.TruthTimeline.Row;
import org.apache.commons.math3.stat.correlation.PearsonsCorrelation;
import org.apache.commons.math3.stat.descriptive.rank.Percentile;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Holds a harness's per-request results against the server's truth ({@code infersim check-harness}): matches each
 * measured request to the choice the server timed, then gives each metric's error (harness minus truth, wall ms) as
 * a distribution, the rate the server actually saw, and the known harness behaviours the errors show.
 *
 * <p>Matching: by request id when every measured request has one the truth knows (AIPerf sends its
 * {@code x_request_id} as the {@code X-Request-ID} header, which the mock keeps); else by order, the harness's
 * requests (by start time where the format has one, else as listed) against the truth's by arrival. The truth may
 * hold more (a harness's test or warm-up requests, sent first): order matching then drops the earliest extra rows.
 */
public final class HarnessCheck {
    /** Achieved below this share of the target rate is named as under-delivery. */
    static final double UNDER_DELIVERY = 0.95;
    /** TTFT error correlated this strongly with the requests in flight at arrival is named as growing with load. */
    static final double LOAD_CORRELATION = 0.5;

    /** One metric's error distribution, harness minus truth; NaN fields when no request has the metric. */
    public record ErrorSummary(int n, double min, double p50, double p99, double max) {
        static ErrorSummary of(double[] errors) {
            if (errors.length == 0) {
                return new ErrorSummary(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
            }
            double[] s = errors.clone();
            Arrays.sort(s);
            // numpy.percentile's default (linear interpolation), as vLLM reports its percentiles.
            Percentile p = new Percentile().withEstimationType(Percentile.EstimationType.R_7);
            p.setData(s);
            return new ErrorSummary(s.length, s[0], p.evaluate(50), p.evaluate(99), s[s.length - 1]);
        }
    }

    /**
     * The check: how requests were matched, per-metric errors (keys {@code ttft_ms}, {@code tpot_ms}, {@code e2el_ms},
     * {@code itl_mean_ms}, {@code itl_count}, {@code output_tokens}, {@code prompt_tokens}), the arrival rate at the
     * server over the matched requests, the harness's target rate (NaN if unknown) and the behaviours seen.
     */
    public record Report(String matchedBy, int matched, int truthRows, int skippedTruth, int unmatched, int failed,
                         Map<String, ErrorSummary> errors, double achievedRate, double targetRate, List<String> behaviours) {
    }

    private record Pair(Measured m, Row t) {
    }

    private HarnessCheck() {
    }

    /** {@code targetRate}: the harness's intended request rate (req/s), NaN for the result file's own or none. */
    public static Report check(HarnessResults.Results results, List<Row> truth, double targetRate) {
        List<Measured> measured = results.requests();
        String matchedBy;
        List<Pair> pairs = new ArrayList<>();
        int unmatched = 0;
        int skipped = 0;
        Map<String, Row> byId = new HashMap<>();
        for (Row t : truth) {
            if (t.index() == 0) {
                byId.put(t.requestId(), t);
            }
        }
        if (!measured.isEmpty() && measured.stream().allMatch(m -> m.requestId() != null && byId.containsKey(m.requestId()))) {
            matchedBy = "request id";
            for (Measured m : measured) {
                pairs.add(new Pair(m, byId.get(m.requestId())));
            }
        } else {
            List<Measured> ordered = new ArrayList<>(measured);
            boolean timed = ordered.stream().allMatch(m -> !Double.isNaN(m.startMs()));
            if (timed) {
                ordered.sort(Comparator.comparingDouble(Measured::startMs));
            }
            matchedBy = timed ? "order of start time and arrival" : "request order and arrival order";
            skipped = Math.max(0, truth.size() - ordered.size());
            unmatched = Math.max(0, ordered.size() - truth.size());
            for (int i = 0; i < ordered.size() - unmatched; i++) {
                pairs.add(new Pair(ordered.get(i), truth.get(skipped + i)));
            }
        }

        Map<String, ErrorSummary> errors = new LinkedHashMap<>();
        errors.put("ttft_ms", ErrorSummary.of(errors(pairs, p -> p.m().ttftMs() - p.t().ttftMs())));
        errors.put("tpot_ms", ErrorSummary.of(errors(pairs, p -> p.m().tpotMs() - p.t().tpotMs())));
        errors.put("e2el_ms", ErrorSummary.of(errors(pairs, p -> p.m().e2elMs() - p.t().e2elMs())));
        errors.put("itl_mean_ms", ErrorSummary.of(errors(pairs, p -> p.m().itlsMs() == null || p.m().itlsMs().length == 0
                || p.t().gaps() == 0 ? Double.NaN : mean(p.m().itlsMs()) - p.t().tpotMs())));
        errors.put("itl_count", ErrorSummary.of(errors(pairs, p -> p.m().itlsMs() == null ? Double.NaN
                : p.m().itlsMs().length - p.t().gaps())));
        errors.put("output_tokens", ErrorSummary.of(errors(pairs, p -> p.m().outputTokens() < 0 ? Double.NaN
                : p.m().outputTokens() - p.t().completionTokens())));
        errors.put("prompt_tokens", ErrorSummary.of(errors(pairs, p -> p.m().promptTokens() < 0 ? Double.NaN
                : p.m().promptTokens() - p.t().promptTokens())));

        double achieved = achievedRate(pairs);
        double target = Double.isNaN(targetRate) ? results.requestRate() : targetRate;
        List<String> behaviours = behaviours(pairs, truth, achieved, target);
        return new Report(matchedBy, pairs.size(), truth.size(), skipped, unmatched, results.failed(), errors, achieved,
                target, behaviours);
    }

    private static double[] errors(List<Pair> pairs, java.util.function.ToDoubleFunction<Pair> error) {
        return pairs.stream().mapToDouble(error).filter(e -> !Double.isNaN(e)).toArray();
    }

    private static double mean(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return s / v.length;
    }

    /** Requests per second arriving at the server: (n - 1) over the span from the first arrival to the last. */
    private static double achievedRate(List<Pair> pairs) {
        if (pairs.size() < 2) {
            return Double.NaN;
        }
        double first = Double.POSITIVE_INFINITY;
        double last = Double.NEGATIVE_INFINITY;
        for (Pair p : pairs) {
            first = Math.min(first, p.t().arrivalMs());
            last = Math.max(last, p.t().arrivalMs());
        }
        return last > first ? (pairs.size() - 1) / ((last - first) / 1e3) : Double.NaN;
    }

    private static List<String> behaviours(List<Pair> pairs, List<Row> truth, double achieved, double target) {
        List<String> seen = new ArrayList<>();
        int fewer = 0;
        int withList = 0;
        for (Pair p : pairs) {
            if (p.m().itlsMs() != null && p.t().gaps() > 0) {
                withList++;
                if (p.m().itlsMs().length < p.t().gaps()) {
                    fewer++;
                }
            }
        }
        if (fewer > 0) {
            seen.add(String.format(Locale.ROOT, "per-chunk ITL: %d of %d requests list fewer ITL values than the server's "
                    + "token gaps, so a chunk carrying several tokens counts as one gap and ITL reads long", fewer, withList));
        }
        int tokensOff = (int) pairs.stream().filter(p -> p.m().outputTokens() >= 0
                && p.m().outputTokens() != p.t().completionTokens()).count();
        if (tokensOff > 0) {
            seen.add(String.format(Locale.ROOT, "output token counts: %d of %d requests differ from the server's", tokensOff,
                    pairs.size()));
        }
        double r = ttftLoadCorrelation(pairs, truth);
        ErrorSummary ttft = ErrorSummary.of(errors(pairs, p -> p.m().ttftMs() - p.t().ttftMs()));
        if (r >= LOAD_CORRELATION && ttft.p99() - ttft.p50() > 1.0) {
            seen.add(String.format(Locale.ROOT, "TTFT error grows with load (r = %.2f against requests in flight at arrival; "
                    + "p99 %.2f ms vs p50 %.2f ms): the harness times requests while they wait on its side, as when TTFT "
                    + "starts before a concurrency semaphore or on a busy client loop", r, ttft.p99(), ttft.p50()));
        }
        if (!Double.isNaN(target) && !Double.isNaN(achieved) && achieved < UNDER_DELIVERY * target) {
            seen.add(String.format(Locale.ROOT, "rate under-delivery: the server saw %.2f req/s against a target of %.2f "
                    + "(%.0f%%)", achieved, target, 100 * achieved / target));
        }
        return seen;
    }

    /** Pearson r of TTFT error against the server's requests in flight just before each arrival; NaN if undefined. */
    static double ttftLoadCorrelation(List<Pair> pairs, List<Row> truth) {
        if (pairs.size() < 3) {
            return Double.NaN;
        }
        double[] inFlight = new double[pairs.size()];
        double[] error = new double[pairs.size()];
        for (int i = 0; i < pairs.size(); i++) {
            Row t = pairs.get(i).t();
            int n = 0;
            for (Row o : truth) {
                if (o != t && o.arrivalMs() <= t.arrivalMs() && o.finishedMs() > t.arrivalMs()) {
                    n++;
                }
            }
            inFlight[i] = n;
            error[i] = pairs.get(i).m().ttftMs() - t.ttftMs();
        }
        double r = new PearsonsCorrelation().correlation(inFlight, error);
        return Double.isNaN(r) ? Double.NaN : r;
    }

    /** The report as console lines. */
    public static String render(Report r) {
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "Matched %d requests to the truth by %s (truth rows %d, earliest %d unmatched, "
                        + "harness requests without truth %d, failed in the harness %d)%n", r.matched(), r.matchedBy(),
                r.truthRows(), r.skippedTruth(), r.unmatched(), r.failed()));
        s.append(String.format(Locale.ROOT, "%-15s %6s %11s %11s %11s %11s%n", "harness-truth", "n", "min", "p50", "p99", "max"));
        r.errors().forEach((metric, e) -> s.append(String.format(Locale.ROOT, "%-15s %6d %11s %11s %11s %11s%n", metric,
                e.n(), num(e.min()), num(e.p50()), num(e.p99()), num(e.max()))));
        s.append(String.format(Locale.ROOT, "Rate at the server: %s req/s (target %s)%n", num(r.achievedRate()),
                Double.isNaN(r.targetRate()) ? "unknown" : num(r.targetRate())));
        if (r.behaviours().isEmpty()) {
            s.append("No known harness behaviour seen.\n");
        }
        for (String b : r.behaviours()) {
            s.append("Seen: ").append(b).append('\n');
        }
        return s.toString();
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.3f", v);
    }
}
