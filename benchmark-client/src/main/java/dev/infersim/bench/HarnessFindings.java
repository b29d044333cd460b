package dev.infersim.bench;

import dev.infersim.bench.HarnessResults.Results;
import dev.infersim.bench.RequestMatcher.Matching;
import dev.infersim.bench.RequestMatcher.Pair;
import dev.infersim.bench.TruthTimeline.Row;
import org.apache.commons.math3.stat.correlation.PearsonsCorrelation;
import org.apache.commons.math3.stat.descriptive.rank.Percentile;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The catalogue of harness behaviours {@code check-harness} looks for, each tested against the server's truth with a
 * stated threshold. What rests on the pairing of requests uses only trusted pairs (unambiguous, physically possible);
 * what rests on arrivals uses the matched rows' arrival instants at the server.
 * <ul>
 *   <li>{@code rate_off_target}: the rate at the server, (n - 1) over the span of arrivals, off the requested rate in
 *       either direction by more than {@value ArrivalFit#RATE_TOLERANCE} (constant rate) or three standard errors of a rate
 *       from n - 1 gaps of the requested coefficient of variation, whichever is more.</li>
 *   <li>{@code arrival_process_off}: Poisson or gamma asked: the gaps between arrivals rejected by a one-sample
 *       Kolmogorov-Smirnov test (Commons Math) against the requested gap distribution at significance
 *       {@value ArrivalFit#ALPHA}; constant asked: gaps whose coefficient of variation exceeds
 *       {@value ArrivalFit#CONSTANT_CV}. Both tests are {@link ArrivalFit}'s, which {@code bench} judges its own sends
 *       by.</li>
 *   <li>{@code repeated_schedule_gaps}: Poisson or gamma asked: the harness's own planned send instants repeat a gap
 *       (to the microsecond) {@value #REPEATS} or more times, which independent continuous draws do not.</li>
 *   <li>{@code token_coalescing}: requests whose tokens reached the harness in fewer chunks than tokens.</li>
 *   <li>{@code per_chunk_itl}: requests that list fewer ITL values than the server's token gaps.</li>
 *   <li>{@code event_loop_stalls}: where the harness lists one ITL per token gap, gaps it saw at under
 *       {@value #BUNCHED} of the server's (of at least 1 ms): tokens that waited in the socket and were read together;
 *       named when at least {@value #STALL_SHARE} of the gaps and three or more are so.</li>
 *   <li>{@code ttft_before_send} and {@code ttft_after_first_token}: where the format has the instants, the TTFT error
 *       split into server arrival minus the harness's start and the harness's first token minus the server's; named
 *       when a part's p99 exceeds {@value #TTFT_PART_MS} ms. Without instants, {@code ttft_error}: the whole error's
 *       p99 above it.</li>
 *   <li>{@code output_tokens_differ}, {@code prompt_tokens_differ}: counts other than the server's usage.</li>
 *   <li>{@code warmup_counted}: fewer requests reached the server before the first counted one than the warm-ups the
 *       harness was asked for.</li>
 *   <li>{@code concurrency_exceeded}: more requests in flight at the server (arrival to last token) than the cap.</li>
 * </ul>
 */
public final class HarnessFindings {
    static final int REPEATS = 3;
    static final double BUNCHED = 0.25;
    static final double STALL_SHARE = 0.01;
    static final double TTFT_PART_MS = 5.0;

    private HarnessFindings() {
    }

    /** Every finding the matched run shows, in the catalogue's order. */
    public static List<HarnessFinding> find(Matching matching, Results results, HarnessTarget target) {
        List<HarnessFinding> found = new ArrayList<>();
        double[] arrivals = matching.pairs().stream().mapToDouble(p -> p.t().arrivalMs()).sorted().toArray();
        List<Pair> trusted = matching.trusted();
        add(found, rateOffTarget(arrivals, target));
        add(found, arrivalProcessOff(arrivals, target));
        add(found, repeatedScheduleGaps(results.scheduledMs(), target));
        add(found, tokenCoalescing(trusted));
        add(found, perChunkItl(trusted));
        add(found, eventLoopStalls(trusted));
        found.addAll(ttft(trusted, matching.pairs().stream().map(Pair::t).toList()));
        add(found, tokensDiffer(trusted, true));
        add(found, tokensDiffer(trusted, false));
        add(found, warmupCounted(matching, target));
        add(found, concurrencyExceeded(matching.pairs(), target));
        return found;
    }

    private static void add(List<HarnessFinding> found, HarnessFinding f) {
        if (f != null) {
            found.add(f);
        }
    }

    /** Requests per second at the server: (n - 1) over the span of arrivals; NaN under two arrivals. */
    static double achievedRate(double[] sortedArrivalsMs) {
        int n = sortedArrivalsMs.length;
        return n < 2 || sortedArrivalsMs[n - 1] <= sortedArrivalsMs[0] ? Double.NaN
                : (n - 1) / ((sortedArrivalsMs[n - 1] - sortedArrivalsMs[0]) / 1e3);
    }

    /** The arrivals against the target's process; null when the target asks for no rate or no known process. */
    private static ArrivalFit fit(double[] sortedArrivalsMs, HarnessTarget target) {
        double burstiness = switch (target.process()) {
            case POISSON -> 1;
            case GAMMA -> target.burstiness();
            case CONSTANT -> Double.POSITIVE_INFINITY;
            default -> Double.NaN;
        };
        return target.rateReqPerS() > 0 && !Double.isNaN(burstiness)
                ? ArrivalFit.ofSortedMs(sortedArrivalsMs, target.rateReqPerS(), burstiness) : null;
    }

    static HarnessFinding rateOffTarget(double[] arrivals, HarnessTarget target) {
        ArrivalFit fit = arrivals.length < 3 ? null : fit(arrivals, target);
        if (fit == null || !fit.rateOff()) {
            return null;
        }
        double achieved = achievedRate(arrivals);
        double ratio = achieved / target.rateReqPerS();
        double tolerance = fit.tolerance();
        boolean fast = ratio > 1;
        return new HarnessFinding("rate_off_target", String.format(Locale.ROOT,
                "the server saw %.2f req/s against %.2f requested (%+.0f%%; tolerance %.0f%% over %d arrivals)",
                achieved, target.rateReqPerS(), 100 * (ratio - 1), 100 * tolerance, arrivals.length),
                evidence("requested_rate_per_s", target.rateReqPerS(), "achieved_rate_per_s", achieved, "ratio", ratio,
                        "tolerance", tolerance, "arrivals", arrivals.length),
                fast ? "The harness sends faster than asked: its sends are not one schedule at the requested rate (as when "
                        + "each worker process draws its own gaps and they all add to one timeline, or some start from a "
                        + "shared offset that was not yet set)."
                        : "The harness sends slower than asked: it cannot keep pace (too few workers or connections, a "
                        + "concurrency cap, a send that waits on earlier responses, or sleeps that overshoot).");
    }

    static HarnessFinding arrivalProcessOff(double[] arrivals, HarnessTarget target) {
        ArrivalFit fit = fit(arrivals, target);
        if (fit == null || !fit.judged() || !fit.gapsOff()) {
            return null;
        }
        int gaps = arrivals.length - 1;
        if (target.process() == HarnessTarget.Process.CONSTANT) {
            return new HarnessFinding("arrival_process_off", String.format(Locale.ROOT,
                    "constant rate asked, but the gaps between arrivals vary with a coefficient of variation of %.2f "
                            + "(over %.2f; 0 is constant, 1 Poisson) over %d gaps", fit.gapCv(), ArrivalFit.CONSTANT_CV,
                    gaps),
                    evidence("gap_cv", fit.gapCv(), "gaps", gaps),
                    "The harness does not hold its sends to a fixed period: sends wait on a busy loop or on workers that "
                            + "take requests in bursts.");
        }
        double pShape = fit.ksPAtAchievedRate();
        String law = target.process() == HarnessTarget.Process.POISSON ? "exponential" : "gamma";
        return new HarnessFinding("arrival_process_off", String.format(Locale.ROOT,
                "the gaps between arrivals are not %s at the requested rate: Kolmogorov-Smirnov D = %.3f, p = %.2g < %s "
                        + "over %d gaps (gap CV %.2f against %.2f asked; at the achieved mean gap p = %.2g)",
                law, fit.ksD(), fit.ksP(), ArrivalFit.ALPHA, gaps, fit.gapCv(), target.gapCv(), pShape),
                evidence("ks_d", fit.ksD(), "p_value", fit.ksP(), "significance", ArrivalFit.ALPHA, "gaps", gaps,
                        "gap_cv", fit.gapCv(), "p_value_at_achieved_rate", pShape),
                pShape >= ArrivalFit.ALPHA ? "The gaps have the requested shape at another mean: the rate is off "
                        + "(rate_off_target)."
                        : "The gaps are not independent draws of the requested law even at the achieved rate: sends come "
                        + "in clumps or repeats (workers sharing one seed, bursts after stalls, or a coarse sleep).");
    }

    static HarnessFinding repeatedScheduleGaps(double[] scheduledMs, HarnessTarget target) {
        if (target.process() != HarnessTarget.Process.POISSON && target.process() != HarnessTarget.Process.GAMMA
                || scheduledMs.length < REPEATS + 1) {
            return null;
        }
        double[] sorted = scheduledMs.clone();
        Arrays.sort(sorted);
        Map<Long, Integer> counts = new TreeMap<>();
        double[] gaps = gaps(sorted);
        for (double g : gaps) {
            long us = Math.round(g * 1e3);
            if (us > 0) {
                counts.merge(us, 1, Integer::sum);
            }
        }
        List<Map.Entry<Long, Integer>> repeated = counts.entrySet().stream().filter(e -> e.getValue() >= REPEATS)
                .sorted(Map.Entry.<Long, Integer>comparingByValue().reversed()).toList();
        if (repeated.isEmpty()) {
            return null;
        }
        int inRepeats = repeated.stream().mapToInt(Map.Entry::getValue).sum();
        StringBuilder top = new StringBuilder();
        for (int i = 0; i < Math.min(4, repeated.size()); i++) {
            top.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.3f ms x%d", repeated.get(i).getKey() / 1e3,
                    repeated.get(i).getValue()));
        }
        return new HarnessFinding("repeated_schedule_gaps", String.format(Locale.ROOT,
                "the harness's own schedule repeats gaps: %s (%d values drawn %d or more times, %d of %d gaps)", top,
                repeated.size(), REPEATS, inRepeats, gaps.length),
                evidence("repeated_values", repeated.size(), "gaps_in_repeats", inRepeats, "gaps", gaps.length,
                        "most_repeated_gap_ms", repeated.get(0).getKey() / 1e3, "most_repeated_count",
                        repeated.get(0).getValue()),
                "Several schedulers draw the same sequence of gaps (one generator seeded alike in every worker "
                        + "process), so the sends are not one random process: seed each worker differently or draw "
                        + "every gap in one place.");
    }

    static HarnessFinding tokenCoalescing(List<Pair> trusted) {
        int withChunks = 0;
        int fewer = 0;
        long tokens = 0;
        long chunks = 0;
        for (Pair p : trusted) {
            int c = p.m().chunks();
            if (c > 0 && p.t().completionTokens() > 1) {
                withChunks++;
                if (c < p.t().completionTokens()) {
                    fewer++;
                    tokens += p.t().completionTokens();
                    chunks += c;
                }
            }
        }
        if (fewer == 0) {
            return null;
        }
        return new HarnessFinding("token_coalescing", String.format(Locale.ROOT,
                "%d of %d requests received their tokens in fewer chunks than tokens (%.2f tokens a chunk in those)",
                fewer, withChunks, (double) tokens / chunks),
                evidence("requests_coalesced", fewer, "requests", withChunks, "tokens_per_chunk", (double) tokens / chunks),
                "Tokens the server sent one by one reached the harness together (a buffering proxy, Nagle's algorithm, or "
                        + "a reader that takes several events a read), so chunk timings cannot show token gaps.");
    }

    static HarnessFinding perChunkItl(List<Pair> trusted) {
        int listed = 0;
        int fewer = 0;
        double excess = 0;
        for (Pair p : trusted) {
            double[] itls = p.m().itlsMs();
            if (itls != null && p.t().gaps() > 0) {
                listed++;
                if (itls.length < p.t().gaps() && itls.length > 0) {
                    fewer++;
                    excess += mean(itls) - p.t().tpotMs();
                }
            }
        }
        if (fewer == 0) {
            return null;
        }
        return new HarnessFinding("per_chunk_itl", String.format(Locale.ROOT,
                "%d of %d requests list fewer ITL values than the server's token gaps; their mean ITL reads %.2f ms "
                        + "long on average", fewer, listed, excess / fewer),
                evidence("requests_short", fewer, "requests", listed, "mean_itl_excess_ms", excess / fewer),
                "The harness records one ITL per chunk: a chunk of k tokens hides k - 1 gaps, so ITL reads long and its "
                        + "count short; split each chunk's gap over the tokens it carries.");
    }

    static HarnessFinding eventLoopStalls(List<Pair> trusted) {
        int compared = 0;
        int bunched = 0;
        int requests = 0;
        double worst = 0;
        for (Pair p : trusted) {
            double[] itls = p.m().itlsMs();
            double[] times = p.t().tokenTimesMs();
            if (itls == null || itls.length != p.t().gaps()) {
                continue;
            }
            boolean hit = false;
            for (int k = 0; k < itls.length; k++) {
                double server = times[k + 1] - times[k];
                compared++;
                worst = Math.max(worst, itls[k] - server);
                if (server >= 1 && itls[k] < BUNCHED * server) {
                    bunched++;
                    hit = true;
                }
            }
            requests += hit ? 1 : 0;
        }
        if (bunched < 3 || bunched < STALL_SHARE * compared) {
            return null;
        }
        return new HarnessFinding("event_loop_stalls", String.format(Locale.ROOT,
                "%d of %d token gaps (%.1f%%, in %d requests) reached the harness bunched, under %.0f%% of the server's "
                        + "gap; the longest wait was %.1f ms over the server's gap", bunched, compared,
                100.0 * bunched / compared, requests, 100 * BUNCHED, worst),
                evidence("bunched_gaps", bunched, "compared_gaps", compared, "requests_affected", requests,
                        "max_gap_excess_ms", worst),
                "The client's event loop was busy (its own work, GC, or no free core) while tokens waited in the socket, "
                        + "then read them together: the spread of its ITL and part of its TPOT are its own delay.");
    }

    /** The TTFT error split where the instants exist, else the whole error; each named above TTFT_PART_MS at p99. */
    static List<HarnessFinding> ttft(List<Pair> trusted, List<Row> matchedRows) {
        List<HarnessFinding> found = new ArrayList<>();
        double[] before = trusted.stream().filter(p -> Double.isFinite(p.m().startMs()) && Double.isFinite(p.m().firstTokenMs()))
                .mapToDouble(p -> p.t().arrivalMs() - p.m().startMs()).toArray();
        double[] total = trusted.stream().mapToDouble(Pair::ttftErrorMs).filter(Double::isFinite).toArray();
        double r = ttftLoadCorrelation(trusted, matchedRows);
        if (before.length > 0) {
            double[] after = trusted.stream().filter(p -> Double.isFinite(p.m().startMs()) && Double.isFinite(p.m().firstTokenMs()))
                    .mapToDouble(p -> p.m().firstTokenMs() - p.t().firstTokenMs()).toArray();
            double share = mean(before) / mean(total);
            Quantiles b = Quantiles.of(before);
            if (b.p99 > TTFT_PART_MS) {
                found.add(new HarnessFinding("ttft_before_send", String.format(Locale.ROOT,
                        "TTFT's clock starts %.1f ms (p50; p99 %.1f, max %.1f) before the request reaches the server: %.0f%% "
                                + "of the TTFT error", b.p50, b.p99, b.max, 100 * share),
                        evidence("before_send_p50_ms", b.p50, "before_send_p99_ms", b.p99, "before_send_max_ms", b.max,
                                "share_of_ttft_error", share, "requests", before.length),
                        "The harness starts timing before it sends: its own queues and hand-off to a worker, connection "
                                + "set-up, or a busy loop before the write count as server latency; start the clock at "
                                + "the send, or report the delay apart."));
            }
            Quantiles a = Quantiles.of(after);
            if (a.p99 > TTFT_PART_MS) {
                found.add(new HarnessFinding("ttft_after_first_token", String.format(Locale.ROOT,
                        "the harness notices the first token %.1f ms (p50; p99 %.1f, max %.1f) after the server sent it",
                        a.p50, a.p99, a.max),
                        evidence("after_first_token_p50_ms", a.p50, "after_first_token_p99_ms", a.p99,
                                "after_first_token_max_ms", a.max, "requests", after.length),
                        "The harness's reader runs late when bytes arrive (its process busy or starved of CPU), adding "
                                + "its own delay to TTFT."));
            }
            return found;
        }
        Quantiles t = Quantiles.of(total);
        if (total.length > 0 && t.p99 > TTFT_PART_MS) {
            found.add(new HarnessFinding("ttft_error", String.format(Locale.ROOT,
                    "the harness's TTFT exceeds the server's by %.1f ms (p50; p99 %.1f, max %.1f; r = %.2f against "
                            + "requests in flight at arrival)", t.p50, t.p99, t.max, r),
                    evidence("ttft_error_p50_ms", t.p50, "ttft_error_p99_ms", t.p99, "ttft_error_max_ms", t.max,
                            "load_correlation", r, "requests", total.length),
                    "The harness's TTFT holds its own time before the send (connection set-up, task start, a busy loop) "
                            + "or after the first token; the format keeps no instants to tell which."));
        }
        return found;
    }

    static HarnessFinding tokensDiffer(List<Pair> trusted, boolean output) {
        int compared = 0;
        int differ = 0;
        long harness = 0;
        long server = 0;
        for (Pair p : trusted) {
            int m = output ? p.m().outputTokens() : p.m().promptTokens();
            int s = output ? p.t().completionTokens() : p.t().promptTokens();
            if (m >= 0) {
                compared++;
                harness += m;
                server += s;
                differ += m != s ? 1 : 0;
            }
        }
        if (differ == 0) {
            return null;
        }
        String what = output ? "output" : "prompt";
        return new HarnessFinding(what + "_tokens_differ", String.format(Locale.ROOT,
                "%d of %d requests' %s token counts differ from the server's usage (harness/server %.3f in all)", differ,
                compared, what, (double) harness / server),
                evidence("requests_differ", differ, "requests", compared, "harness_over_server", (double) harness / server),
                output ? "The harness counts output tokens itself (re-tokenizing the text with another tokenizer, or "
                        + "counting chunks) instead of reading the server's usage."
                        : "The harness counts prompt tokens with another tokenizer than the server's, or reports the "
                        + "length it asked for rather than what the server received.");
    }

    static HarnessFinding warmupCounted(Matching matching, HarnessTarget target) {
        int asked = target.warmupRequests();
        if (asked <= 0 || matching.truthBeforeFirst() >= asked) {
            return null;
        }
        return new HarnessFinding("warmup_counted", String.format(Locale.ROOT,
                "%d warm-up requests were asked for, but only %d reached the server before the first counted one",
                asked, matching.truthBeforeFirst()),
                evidence("warmup_requests", asked, "requests_before_first_counted", matching.truthBeforeFirst()),
                "The harness counts warm-up requests in its results (or sends them alongside the measured ones).");
    }

    static HarnessFinding concurrencyExceeded(List<Pair> pairs, HarnessTarget target) {
        int cap = target.maxConcurrency();
        if (cap <= 0 || pairs.isEmpty()) {
            return null;
        }
        double[][] events = new double[2 * pairs.size()][];
        int e = 0;
        for (Pair p : pairs) {
            events[e++] = new double[]{p.t().arrivalMs(), 1};
            events[e++] = new double[]{p.t().finishedMs(), -1};
        }
        // Ends before starts at one instant: a slot freed and taken at once is not two in flight.
        Arrays.sort(events, (x, y) -> x[0] != y[0] ? Double.compare(x[0], y[0]) : Double.compare(x[1], y[1]));
        int inFlight = 0;
        int max = 0;
        double above = 0;
        for (int i = 0; i < events.length; i++) {
            inFlight += (int) events[i][1];
            max = Math.max(max, inFlight);
            if (inFlight > cap && i + 1 < events.length) {
                above += events[i + 1][0] - events[i][0];
            }
        }
        if (max <= cap) {
            return null;
        }
        double span = events[events.length - 1][0] - events[0][0];
        return new HarnessFinding("concurrency_exceeded", String.format(Locale.ROOT,
                "up to %d requests were in flight at the server against a cap of %d (above it %.1f%% of the time)", max,
                cap, 100 * above / span),
                evidence("max_in_flight", max, "max_concurrency", cap, "share_of_time_above", above / span),
                "The harness lets more requests run than its cap: a slot is taken after the send or freed before the "
                        + "response ends, or each worker applies the cap on its own.");
    }

    /** Pearson r of TTFT error against the server's requests in flight just before each arrival; NaN if undefined. */
    static double ttftLoadCorrelation(List<Pair> pairs, List<Row> rows) {
        if (pairs.size() < 3) {
            return Double.NaN;
        }
        double[] inFlight = new double[pairs.size()];
        double[] error = new double[pairs.size()];
        for (int i = 0; i < pairs.size(); i++) {
            Row t = pairs.get(i).t();
            int n = 0;
            for (Row o : rows) {
                if (o != t && o.arrivalMs() <= t.arrivalMs() && o.finishedMs() > t.arrivalMs()) {
                    n++;
                }
            }
            inFlight[i] = n;
            error[i] = pairs.get(i).ttftErrorMs();
        }
        double r = new PearsonsCorrelation().correlation(inFlight, error);
        return Double.isNaN(r) ? Double.NaN : r;
    }

    private static double[] gaps(double[] sorted) {
        double[] g = new double[Math.max(0, sorted.length - 1)];
        for (int i = 0; i < g.length; i++) {
            g[i] = sorted[i + 1] - sorted[i];
        }
        return g;
    }

    static double mean(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return s / v.length;
    }

    private static Map<String, Double> evidence(Object... keyValues) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], ((Number) keyValues[i + 1]).doubleValue());
        }
        return m;
    }

    /** p50, p99 and max by numpy's default (linear) percentile, as vLLM reports them. */
    record Quantiles(double p50, double p99, double max) {
        static Quantiles of(double[] v) {
            if (v.length == 0) {
                return new Quantiles(Double.NaN, Double.NaN, Double.NaN);
            }
            double[] s = v.clone();
            Arrays.sort(s);
            Percentile p = new Percentile().withEstimationType(Percentile.EstimationType.R_7);
            p.setData(s);
            return new Quantiles(p.evaluate(50), p.evaluate(99), s[s.length - 1]);
        }
    }
}
