package dev.infersim.bench.harness;

import dev.infersim.bench.harness.HarnessResults.Measured;
import dev.infersim.bench.harness.HarnessResults.Results;
import dev.infersim.bench.harness.RequestMatcher.Matching;
import dev.infersim.bench.harness.RequestMatcher.Pair;
import dev.infersim.bench.harness.TruthTimeline.Row;
import dev.infersim.bench.measure.ArrivalFit;
import org.apache.commons.math3.stat.descriptive.rank.Percentile;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The catalogue of harness behaviours {@code check-harness} looks for, each tested against the server's truth at the
 * wire with a stated threshold and its reason. What rests on the pairing of requests uses only trusted pairs (found by
 * id or text, or assigned unambiguously and physically possible); what rests on arrivals uses the matched rows'
 * instants at the server. The first four also explain a match that failed (see {@link HarnessCheck}); they are tried
 * in this order.
 * <ul>
 *   <li>{@code clock_started_late}: the harness's TTFT falls short of the server's (the TTFT error below zero) on at
 *       least {@value #LATE_SHARE} of the requests and by more than {@value #LATE_MEDIAN_MS} ms at the median. No
 *       working clock can see a token before the server wrote it. Where the format has instants, its start after the
 *       server read the request.</li>
 *   <li>{@code clock_started_early}: the floor of the TTFT error (its smallest; with instants, of the time from the
 *       harness's start to the server reading the request) above {@value #EARLY_FLOOR_MS} ms, and above half its spread
 *       (p50 - floor). Measured at the wire the error is the client's own delay, never below zero, so its smallest
 *       over a run is what every request carried: a clock started early by c puts it at c and above. A Python client's
 *       own send and read on loopback cost 1 to 3 ms (vllm bench serve's smallest error in the corpus: 0.9 to 2.4 ms on
 *       a 2-core machine under load); the tail is the machine's and is not judged, and on a machine so loaded that the
 *       errors spread by more than twice their floor, a floor is not told apart from the load.</li>
 *   <li>{@code time_units}: the harness's decode spans (E2EL - TTFT) are 1000 or 10^6 times the server's, or the
 *       inverse, within a factor of 3: it writes another unit than its format declares. The check goes on at the
 *       corrected unit.</li>
 *   <li>{@code truth_of_another_run}: none of the harness's ids or texts is in the truth log, or (instants kept, no
 *       identity) its sends and the log's requests do not overlap in time; or its ids or texts are there but not its
 *       timings ({@link #identifiedPairsOfAnotherRun}: a fresh mock with the same seed repeats its texts).</li>
 *   <li>{@code requests_dropped}: truth rows that the harness does not list, beyond its failed requests: between its
 *       first and last matched request, or ahead of the first beyond the test and warm-up requests its format declares
 *       (rows ahead are taken while each reached the server within {@value #LEAD_GAP_MS} ms, or 20 of the run's median
 *       gaps, of the next, so that earlier runs in the same log are not counted); named from {@value #DROPPED_MIN} rows
 *       or 1% of the measured requests, whichever is more, since harnesses do send a readiness probe or two they do not
 *       declare.</li>
 *   <li>{@code rate_off_target}: the rate at the server, over the measured requests only, off the requested rate in
 *       either direction by more than {@value ArrivalFit#RATE_TOLERANCE} (constant rate) or three standard errors of a
 *       rate from n - 1 gaps of the requested coefficient of variation, whichever is more.</li>
 *   <li>{@code arrival_process_off}: Poisson or gamma asked: the gaps between arrivals rejected by a one-sample
 *       Kolmogorov-Smirnov test (Commons Math) against the requested gap distribution at significance
 *       {@value ArrivalFit#ALPHA}; constant asked: gaps whose coefficient of variation exceeds
 *       {@value ArrivalFit#CONSTANT_CV}. Both tests are {@link ArrivalFit}'s, which {@code bench} judges its own sends
 *       by. Gaps that pass the test at the achieved mean gap, with the rate off, are the rate's finding only.</li>
 *   <li>{@code repeated_schedule_gaps}: Poisson or gamma asked: the harness's own planned send instants repeat a gap
 *       (to the microsecond) {@value #REPEATS} or more times, which independent continuous draws do not.</li>
 *   <li>{@code concurrency_exceeded}: more requests in flight at the server (read to last token written) than the cap.</li>
 *   <li>{@code warmup_counted}: fewer requests reached the server before the first counted one than the warm-ups the
 *       harness was asked for.</li>
 *   <li>{@code hidden_retries}: matched requests that the server was asked for more than once (the truth's
 *       {@code attempt}, by the request's {@code x-request-id} or a fingerprint of its body) beyond the earlier rows of
 *       the same prompt it answered in full (a prompt sent twice is a duplicate, not a retry), more of them than the
 *       harness counts as failed.</li>
 *   <li>{@code coarse_clock}: at least {@value #COARSE_SHARE} of the harness's durations (TTFT, E2EL, ITLs above zero)
 *       lie within 2% of a multiple of one tick of 0.5 ms or more; a clock of nanosecond resolution puts 4% there.</li>
 *   <li>{@code token_coalescing}: requests whose tokens the harness recorded in fewer chunks than the server wrote
 *       tokens; an ITL list with one value a chunk then reads long and short.</li>
 *   <li>{@code chunks_split}: requests with more chunks (ITL values + 1) than the server wrote tokens.</li>
 *   <li>{@code event_loop_stalls}: where the harness lists one ITL per token gap, gaps it saw at under
 *       {@value #BUNCHED} of the server's written gap (of at least 1 ms): tokens that waited in its socket; named when
 *       at least {@value #STALL_SHARE} of the gaps, three or more, and a larger share than the server's own writes
 *       bunched against its plan in the same run (the machine's starvation, which the client beside it shares).
 *       Not judged on a coarse clock.</li>
 *   <li>{@code output_tokens_differ}: the harness's output counts, fitted to the server's, off by more than
 *       {@value #COUNT_TOLERANCE} (tokenizers of one model family count the same text within about 10%; past that it
 *       counts with another family's tokenizer, or counts chunks or words). Prompt counts are reported, not judged:
 *       a harness's prompt count is the length it asked for, which its tokenizer and the chat template make
 *       differ.</li>
 *   <li>{@code weak_evidence}: no finding, only the reason nothing was judged: the harness keeps no id, text or send
 *       instant, and too many of its requests could not be told from their neighbours (ambiguous, impossible or
 *       unmatched) for 95% to be surely paired.</li>
 * </ul>
 */
public final class HarnessFindings {
    static final double LATE_SHARE = 0.9;
    static final int MIN_SAME_RUN = 20;
    static final double CONTRADICTED_SHARE = 0.05;
    static final double SAME_RUN_CORRELATION = 0.5;
    static final double LATE_MEDIAN_MS = 0.5;
    static final double EARLY_FLOOR_MS = 10;
    static final int DROPPED_MIN = 3;
    static final double LEAD_GAP_MS = 2000;
    static final int REPEATS = 3;
    static final double COARSE_SHARE = 0.95;
    static final double BUNCHED = 0.25;
    static final double STALL_SHARE = 0.01;
    static final double COUNT_TOLERANCE = 0.15;
    /** Clock ticks looked for besides the smallest positive duration: common timer resolutions, ms. */
    private static final double[] TICKS = {1, 2, 4, 5, 10, 15.625, 16, 50, 100};

    private HarnessFindings() {
    }

    /**
     * What the check knows beside the matching: the results (at the corrected unit), the target, the unit factor
     * applied (1 when none), and pairs of an assignment without the timing physics (to see how errors lie when the
     * physical one matched too little; empty when not needed).
     */
    record Context(Matching matching, Results results, HarnessTarget target, double unitsFactor, List<Pair> unconstrained) {
    }

    /** Every finding the matched run shows, in the catalogue's order. */
    static List<HarnessFinding> find(Context c) {
        List<HarnessFinding> found = new ArrayList<>();
        Matching matching = c.matching();
        List<Pair> trusted = matching.trusted();
        add(found, clockStartedLate(trusted, c.unconstrained()));
        add(found, clockStartedEarly(trusted));
        add(found, timeUnits(c.unitsFactor()));
        add(found, truthOfAnotherRun(matching, c.results().requests()));
        add(found, requestsDropped(matching, c.results()));
        double[] arrivals = arrivals(matching);
        HarnessFinding rate = rateOffTarget(arrivals, c.target());
        add(found, rate);
        HarnessFinding process = arrivalProcessOff(arrivals, c.target());
        // Gaps of the requested law at another mean are the rate's finding alone.
        if (process != null && !(rate != null && process.evidence().getOrDefault("p_value_at_achieved_rate", 0.0)
                >= ArrivalFit.ALPHA)) {
            found.add(process);
        }
        add(found, repeatedScheduleGaps(c.results().scheduledMs(), c.target()));
        add(found, concurrencyExceeded(matching.pairs(), c.target()));
        add(found, warmupCounted(matching, c.target()));
        add(found, hiddenRetries(matching.pairs(), matching.truth(), c.results().failed()));
        HarnessFinding coarse = coarseClock(c.results().requests());
        add(found, coarse);
        add(found, tokenCoalescing(trusted));
        add(found, chunksSplit(trusted));
        if (coarse == null) {
            add(found, eventLoopStalls(trusted));
        }
        add(found, outputTokensDiffer(matching));
        return found;
    }

    /**
     * The findings that rest on each pair's errors (which request is which), not only on which truth rows the harness's
     * requests are: judged only when at least {@link HarnessCheck#MIN_MATCHED_SHARE} of the requests are trusted pairs.
     */
    static final Set<String> PER_PAIR = Set.of("clock_started_late", "clock_started_early", "token_coalescing",
            "chunks_split", "event_loop_stalls", "output_tokens_differ");

    /**
     * Why too few requests matched, tried in order: a clock started late (the errors of an assignment that lets them
     * be negative, where nothing identifies the requests) or early, another time unit, another run's truth log, dropped
     * requests (only where the harness identifies its requests or keeps instants, since an unsure pairing leaves rows
     * over by itself), else requests too alike to pair ({@code weak_evidence}); the first that holds.
     */
    static List<HarnessFinding> diagnose(Context c) {
        Matching matching = c.matching();
        List<Pair> trusted = matching.trusted();
        List<Measured> measured = c.results().requests();
        boolean keyed = matching.truth().stream().anyMatch(t -> t.textKey() != null);
        boolean identified = measured.stream().anyMatch(m -> m.requestId() != null || keyed && m.textKey() != null)
                || measured.stream().allMatch(m -> Double.isFinite(m.startMs()));
        List<java.util.function.Supplier<HarnessFinding>> causes = List.of(
                () -> clockStartedLate(trusted, c.unconstrained()),
                () -> clockStartedEarly(trusted),
                () -> timeUnits(c.unitsFactor()),
                () -> truthOfAnotherRun(matching, measured),
                () -> identified ? requestsDropped(matching, c.results()) : null,
                () -> identified ? null : weakEvidence(matching));
        for (java.util.function.Supplier<HarnessFinding> cause : causes) {
            HarnessFinding f = cause.get();
            if (f != null) {
                return List.of(f);
            }
        }
        return List.of();
    }

    /** Requests too alike to pair: no id, text or instant, and many assigned pairs ambiguous or impossible. */
    static HarnessFinding weakEvidence(Matching matching) {
        int untrusted = matching.measured() - matching.trusted().size();
        return new HarnessFinding("weak_evidence", String.format(Locale.ROOT,
                "the harness keeps no request id, text or send instant, and %d of its %d requests could not be told "
                        + "apart from their neighbours or from other rows of the log (%d ambiguous, %d impossible, %d "
                        + "unmatched)", untrusted, matching.measured(), matching.ambiguous(), matching.matchingErrors(),
                matching.unmatchedMeasured()),
                evidence("untrusted", untrusted, "requests", matching.measured(), "ambiguous", matching.ambiguous(),
                        "matching_errors", matching.matchingErrors(), "unmatched", matching.unmatchedMeasured()),
                "Its requests are alike in length and timing, and nothing else tells them apart (a truth log of another "
                        + "run of the same workload looks the same): save the generated text or the server's id with "
                        + "each request, or the send instants, or run it on a quieter machine.");
    }

    private static void add(List<HarnessFinding> found, HarnessFinding f) {
        if (f != null) {
            found.add(f);
        }
    }

    /** The matched requests' instants at the server, sorted: the measured requests only, no test or warm-up. */
    static double[] arrivals(Matching matching) {
        return matching.pairs().stream().mapToDouble(p -> p.t().startMs()).sorted().toArray();
    }

    /** The TTFT errors (or, with instants, the start's lag behind the server's read, negated) that judge a late clock. */
    static HarnessFinding clockStartedLate(List<Pair> trusted, List<Pair> unconstrained) {
        List<Pair> pairs = trusted.size() >= Math.max(3, unconstrained.size() / 2) ? trusted : unconstrained;
        double[] errors = pairs.stream().mapToDouble(HarnessFindings::startError).filter(Double::isFinite).toArray();
        if (errors.length < 3) {
            return null;
        }
        long negative = Arrays.stream(errors).filter(e -> e < -RequestMatcher.NEGATIVE_TOLERANCE_MS).count();
        Quantiles q = Quantiles.of(errors);
        if (negative < LATE_SHARE * errors.length || !(q.p50() < -LATE_MEDIAN_MS)) {
            return null;
        }
        boolean instants = pairs.stream().anyMatch(p -> Double.isFinite(p.beforeSendMs()));
        double shortest = -q.max();
        double longest = -Arrays.stream(errors).min().orElseThrow();
        return new HarnessFinding("clock_started_late", instants ? String.format(Locale.ROOT,
                "the harness's clock starts %.1f ms (p50; %.1f to %.1f) after the server read the request, on %d of %d "
                        + "requests", -q.p50(), shortest, longest, negative, errors.length) : String.format(Locale.ROOT,
                "the harness's TTFT reads %.1f ms (p50; %.1f to %.1f) short of the server's on %d of %d requests: its "
                        + "clock would have seen the first token before the server wrote it", -q.p50(), shortest, longest,
                negative, errors.length),
                evidence("ttft_error_p50_ms", q.p50(), "ttft_error_max_ms", q.max(), "requests_short", negative,
                        "requests", errors.length),
                "The harness starts its TTFT clock after the send (once the response headers arrive, or at the first "
                        + "chunk), so TTFT leaves out the server's queueing and prefill; start it before the request is "
                        + "written.");
    }

    /** Where the format has instants, the harness's start against the server's read (negative: started late); else the TTFT error. */
    private static double startError(Pair p) {
        double before = p.beforeSendMs();
        return Double.isFinite(before) ? before : p.ttftErrorMs();
    }

    static HarnessFinding clockStartedEarly(List<Pair> trusted) {
        double[] before = trusted.stream().mapToDouble(HarnessFindings::startError).filter(Double::isFinite).toArray();
        if (before.length < 3) {
            return null;
        }
        double floor = Arrays.stream(before).min().orElseThrow();
        Quantiles q = Quantiles.of(before);
        if (!(floor > EARLY_FLOOR_MS) || !(floor > (q.p50() - floor) / 2)) {
            return null;
        }
        boolean instants = trusted.stream().anyMatch(p -> Double.isFinite(p.beforeSendMs()));
        return new HarnessFinding("clock_started_early", String.format(Locale.ROOT,
                "%s at least %.1f ms on every one of %d requests (p50 %.1f): each carried time the wire did not, beyond "
                        + "the %.0f ms a client's own send and read cost", instants
                        ? "the harness starts its clock before the server reads the request by"
                        : "the harness's TTFT exceeds the server's by", floor, before.length, q.p50(), EARLY_FLOOR_MS),
                evidence("floor_ms", floor, "p50_ms", q.p50(), "threshold_ms", EARLY_FLOOR_MS, "requests", before.length),
                "The harness starts its TTFT clock before the send (before building the request, opening a connection, "
                        + "or a wait in its own queue), so every TTFT holds that much of the harness's own time; start "
                        + "it as the request is written.");
    }

    static HarnessFinding timeUnits(double factor) {
        if (factor == 1) {
            return null;
        }
        String declared = factor < 1 ? String.format(Locale.ROOT, "%.0f times", 1 / factor)
                : String.format(Locale.ROOT, "1/%.0f of", factor);
        return new HarnessFinding("time_units", String.format(Locale.ROOT,
                "the harness's decode spans (E2EL - TTFT) are %s the server's: its times are not in the unit its format "
                        + "declares (judged here at the corrected unit)", declared),
                evidence("factor_applied", factor),
                factor < 1 ? "The harness writes its times in a smaller unit than its format says (milliseconds where "
                        + "seconds are declared), so every time it reports reads that many times too long."
                        : "The harness writes its times in a larger unit than its format says (seconds where milliseconds "
                        + "are declared), so every time it reports reads that many times too short.");
    }

    /**
     * The harness's texts are in the log but its timings are not: a fresh mock with the same seed generates the same
     * texts in the same order, so another run's log matches them all. Named when of at least {@value #MIN_SAME_RUN}
     * identified pairs {@value #CONTRADICTED_SHARE} or more (but under {@value #LATE_SHARE}: that is a clock started
     * late) would have the harness see a token before the server wrote it (beyond the harness's clock tick, at least
     * 1 ms), and the harness's TTFTs follow the server's with a Spearman rank correlation under
     * {@value #SAME_RUN_CORRELATION} (0.85 and 0.90 for the corpus's two healthy vLLM runs against their own logs,
     * 0.13 and 0.22 against each other's). Where the server's TTFT hardly varies, two runs cannot be told apart this
     * way, and then neither do their numbers differ.
     */
    static HarnessFinding identifiedPairsOfAnotherRun(List<Pair> pairs, double tickMs) {
        List<Pair> identified = pairs.stream().filter(Pair::identified).toList();
        if (identified.size() < MIN_SAME_RUN) {
            return null;
        }
        double tolerance = Math.max(1, tickMs);
        long impossible = identified.stream().filter(p -> p.ttftErrorMs() < -tolerance || p.e2elErrorMs() < -tolerance)
                .count();
        double share = (double) impossible / identified.size();
        if (share < CONTRADICTED_SHARE || share >= LATE_SHARE) {
            return null;
        }
        double r = new org.apache.commons.math3.stat.correlation.SpearmansCorrelation().correlation(
                identified.stream().mapToDouble(p -> p.m().ttftMs()).toArray(),
                identified.stream().mapToDouble(p -> p.t().ttftMs()).toArray());
        if (!(r < SAME_RUN_CORRELATION)) {
            return null;
        }
        return new HarnessFinding("truth_of_another_run", String.format(Locale.ROOT,
                "the truth log has the harness's %d request texts or ids but not its timings: %d of them (%.0f%%) would "
                        + "have had the harness see a token before the server wrote it, and the harness's TTFTs follow "
                        + "the server's with a rank correlation of only %.2f", identified.size(), impossible, 100 * share,
                r),
                evidence("identified", identified.size(), "impossible", impossible, "spearman_ttft", r),
                cause());
    }

    static HarnessFinding truthOfAnotherRun(Matching matching, List<Measured> measured) {
        if (!matching.pairs().isEmpty() || measured.isEmpty() || matching.truth().isEmpty()) {
            return null;
        }
        boolean keyed = matching.truth().stream().anyMatch(t -> t.textKey() != null);
        long identities = measured.stream().filter(m -> m.requestId() != null || keyed && m.textKey() != null).count();
        if (identities > 0) {
            return new HarnessFinding("truth_of_another_run", String.format(Locale.ROOT,
                    "none of the harness's %d request ids or texts is among the truth log's %d rows", identities,
                    matching.truth().size()),
                    evidence("harness_identities", identities, "truth_rows", matching.truth().size()),
                    cause());
        }
        double[] starts = measured.stream().mapToDouble(Measured::startMs).filter(Double::isFinite).toArray();
        if (starts.length == 0) {
            return null;
        }
        double from = Arrays.stream(starts).min().orElseThrow();
        double to = Arrays.stream(starts).max().orElseThrow();
        double truthFrom = matching.truth().stream().mapToDouble(Row::startMs).min().orElseThrow();
        double truthTo = matching.truth().stream().mapToDouble(Row::lastTokenWireMs).max().orElseThrow();
        if (to >= truthFrom && from <= truthTo) {
            return null;
        }
        double apart = from > truthTo ? from - truthTo : truthFrom - to;
        return new HarnessFinding("truth_of_another_run", String.format(Locale.ROOT,
                "the harness sent its requests %.1f s %s the truth log's requests: the two do not overlap in time",
                apart / 1e3, from > truthTo ? "after" : "before"),
                evidence("seconds_apart", apart / 1e3, "truth_rows", matching.truth().size()), cause());
    }

    private static String cause() {
        return "The truth log is not this run's: it was written by another server run (or truncated, or rotated; a "
                + "fresh mock with the same --seed repeats its texts). Check the harness against the log of the server "
                + "it ran against, started fresh for the run.";
    }

    static HarnessFinding requestsDropped(Matching matching, Results results) {
        if (matching.pairs().isEmpty()) {
            return null;
        }
        double first = matching.firstMatchedStartMs();
        double last = matching.lastMatchedStartMs();
        List<Row> unmatched = matching.unmatchedRows();
        int inRun = (int) unmatched.stream().filter(t -> t.startMs() > first && t.startMs() < last).count();
        int lead = leadChain(unmatched, first, arrivals(matching));
        int allowed = results.leadRequests() < 0 ? lead : results.leadRequests();
        int undeclared = Math.max(0, lead - allowed);
        int missing = Math.max(0, inRun - results.failed()) + undeclared;
        int threshold = Math.max(DROPPED_MIN, (int) Math.ceil(0.01 * matching.measured()));
        if (missing < threshold) {
            return null;
        }
        boolean warmup = undeclared >= Math.max(0, inRun - results.failed());
        return new HarnessFinding("requests_dropped", String.format(Locale.ROOT,
                "the server answered %d requests of this run that the harness does not list: %d between its first and "
                        + "last (with %d failed in its file), %d ahead of its first beyond the %d test or warm-up requests "
                        + "its format declares", missing, inRun, results.failed(), undeclared, Math.max(0, allowed)),
                evidence("missing", missing, "in_run", inRun, "ahead_undeclared", undeclared, "ahead", lead,
                        "declared_ahead", Math.max(0, allowed), "failed", results.failed()),
                warmup ? "The harness leaves its first requests out of its results without declaring them (an "
                        + "undeclared warm-up), so its rate and latencies describe a run other than the one sent."
                        : "The harness drops requests from its results without counting them as failed (errors or "
                        + "timeouts swallowed, or results lost), so its numbers describe a run other than the one sent.");
    }

    /** Rows ahead of the first matched request, taken back while each reached the server close after the one before. */
    private static int leadChain(List<Row> unmatched, double first, double[] arrivals) {
        double[] gaps = new double[Math.max(0, arrivals.length - 1)];
        for (int i = 1; i < arrivals.length; i++) {
            gaps[i - 1] = arrivals[i] - arrivals[i - 1];
        }
        double limit = Math.max(LEAD_GAP_MS, gaps.length == 0 ? 0 : 20 * RequestMatcher.median(gaps));
        List<Row> ahead = unmatched.stream().filter(t -> t.startMs() < first).toList();
        int n = 0;
        double next = first;
        for (int i = ahead.size() - 1; i >= 0; i--) {
            if (next - ahead.get(i).startMs() > limit) {
                break;
            }
            n++;
            next = ahead.get(i).startMs();
        }
        return n;
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
        HarnessRate rate = HarnessRate.of(arrivals);
        double ratio = rate.perS() / target.rateReqPerS();
        double tolerance = fit.tolerance();
        boolean fast = ratio > 1;
        return new HarnessFinding("rate_off_target", String.format(Locale.ROOT,
                "the server saw %.2f req/s (95%% interval %.2f to %.2f) against %.2f requested (%+.0f%%; tolerance "
                        + "%.0f%% over %d arrivals)", rate.perS(), rate.low(), rate.high(), target.rateReqPerS(),
                100 * (ratio - 1), 100 * tolerance, arrivals.length),
                evidence("requested_rate_per_s", target.rateReqPerS(), "achieved_rate_per_s", rate.perS(),
                        "achieved_low_per_s", rate.low(), "achieved_high_per_s", rate.high(), "ratio", ratio,
                        "tolerance", tolerance, "arrivals", arrivals.length),
                fast ? "The harness sends faster than asked: its sends are not one schedule at the requested rate (as when "
                        + "each worker process draws its own gaps and they all add to one timeline, a gap shortened, or "
                        + "some start from a shared offset that was not yet set)."
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
                        : fit.gapCv() < 0.5 * target.gapCv() ? "The gaps are far more even than the requested law's: "
                        + "the harness spaces its sends by a fixed or bounded interval instead of drawing each gap "
                        + "from the law."
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

    static HarnessFinding concurrencyExceeded(List<Pair> pairs, HarnessTarget target) {
        int cap = target.maxConcurrency();
        if (cap <= 0 || pairs.isEmpty()) {
            return null;
        }
        double[][] events = new double[2 * pairs.size()][];
        int e = 0;
        for (Pair p : pairs) {
            events[e++] = new double[]{p.t().startMs(), 1};
            events[e++] = new double[]{p.t().lastTokenWireMs(), -1};
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
                        + "response ends, the cap is not applied at all, or each worker applies it on its own.");
    }

    static HarnessFinding warmupCounted(Matching matching, HarnessTarget target) {
        int asked = target.warmupRequests();
        int before = matching.truthBeforeFirst();
        if (asked <= 0 || matching.pairs().isEmpty() || before >= asked) {
            return null;
        }
        return new HarnessFinding("warmup_counted", String.format(Locale.ROOT,
                "%d warm-up requests were asked for, but only %d reached the server before the first counted one",
                asked, before),
                evidence("warmup_requests", asked, "requests_before_first_counted", before),
                "The harness counts warm-up requests in its results (or sends them alongside the measured ones).");
    }

    static HarnessFinding hiddenRetries(List<Pair> pairs, List<Row> truth, int failed) {
        Map<String, List<Row>> byPrompt = new java.util.HashMap<>();
        for (Row t : truth) {
            if (t.promptKey() != null) {
                byPrompt.computeIfAbsent(t.promptKey(), k -> new ArrayList<>()).add(t);
            }
        }
        List<Pair> retried = new ArrayList<>();
        int refused = 0;
        for (Pair p : pairs) {
            Row t = p.t();
            if (t.attempt() < 2) {
                continue;
            }
            // Earlier attempts the server answered in full are the same prompt sent again (a duplicate), not a retry.
            long answered = t.promptKey() == null ? 0 : byPrompt.get(t.promptKey()).stream()
                    .filter(o -> o != t && o.attempt() < t.attempt()).count();
            int lost = (int) (t.attempt() - 1 - answered);
            if (lost > 0) {
                retried.add(p);
                refused += lost;
            }
        }
        if (retried.size() <= failed) {
            return null;
        }
        double[] ttft = retried.stream().mapToDouble(Pair::ttftErrorMs).toArray();
        java.util.Set<Pair> set = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        set.addAll(retried);
        double[] others = pairs.stream().filter(p -> !set.contains(p)).mapToDouble(Pair::ttftErrorMs).toArray();
        double extra = others.length == 0 ? Double.NaN : RequestMatcher.median(ttft) - RequestMatcher.median(others);
        return new HarnessFinding("hidden_retries", String.format(Locale.ROOT,
                "%d of the harness's %d requests were answered only after %d earlier attempts the server refused or "
                        + "lost, and the harness counts %d failed; their TTFT error is %.1f ms above the others' (median)",
                retried.size(), pairs.size(), refused, failed, extra),
                evidence("requests_retried", retried.size(), "earlier_attempts", refused, "failed", failed,
                        "ttft_error_excess_ms", extra),
                "The harness (or a library under it) retries failed requests and reports only the last answer, so its "
                        + "failure count is low and the retried requests' latency holds the failed attempts and the "
                        + "back-off; count each attempt, or report the retries.");
    }

    static HarnessFinding coarseClock(List<Measured> requests) {
        List<Double> values = new ArrayList<>();
        for (Measured m : requests) {
            values.add(m.ttftMs());
            values.add(m.e2elMs());
            if (m.itlsMs() != null) {
                for (double v : m.itlsMs()) {
                    if (v > 0) {
                        values.add(v);
                    }
                }
            }
        }
        double[] v = values.stream().mapToDouble(Double::doubleValue).filter(x -> Double.isFinite(x) && x > 0).toArray();
        if (v.length < 20) {
            return null;
        }
        double smallest = Arrays.stream(v).min().orElseThrow();
        double tick = 0;
        double share = 0;
        for (double candidate : concat(TICKS, smallest)) {
            if (candidate < 0.5) {
                continue;
            }
            long on = Arrays.stream(v).filter(x -> Math.abs(x / candidate - Math.rint(x / candidate)) < 0.02).count();
            if (on >= COARSE_SHARE * v.length && candidate > tick) {
                tick = candidate;
                share = (double) on / v.length;
            }
        }
        if (tick == 0) {
            return null;
        }
        return new HarnessFinding("coarse_clock", String.format(Locale.ROOT,
                "%.0f%% of the harness's %d durations (TTFT, E2EL, ITLs) are multiples of %.3f ms: its clock ticks that "
                        + "coarsely, so shorter gaps read 0 or a whole tick", 100 * share, v.length, tick),
                evidence("tick_ms", tick, "share_on_ticks", share, "durations", v.length),
                "The harness reads a clock of coarse resolution (time.time() on some platforms, a timer rounded to "
                        + "milliseconds or ticks); read a monotonic high-resolution clock (time.perf_counter, "
                        + "System.nanoTime).");
    }

    private static double[] concat(double[] a, double b) {
        double[] c = Arrays.copyOf(a, a.length + 1);
        c[a.length] = b;
        return c;
    }

    static HarnessFinding tokenCoalescing(List<Pair> trusted) {
        int withChunks = 0;
        int fewer = 0;
        long tokens = 0;
        long chunks = 0;
        int listed = 0;
        double excess = 0;
        for (Pair p : trusted) {
            int c = p.m().chunks();
            if (c > 0 && p.t().completionTokens() > 1) {
                withChunks++;
                if (c < p.t().completionTokens()) {
                    fewer++;
                    tokens += p.t().completionTokens();
                    chunks += c;
                    double[] itls = p.m().itlsMs();
                    if (itls != null && itls.length > 0 && itls.length < p.t().gaps()) {
                        listed++;
                        excess += mean(itls) - p.t().tpotMs();
                    }
                }
            }
        }
        if (fewer == 0) {
            return null;
        }
        double longer = listed == 0 ? Double.NaN : excess / listed;
        return new HarnessFinding("token_coalescing", String.format(Locale.ROOT,
                "%d of %d requests recorded their tokens in fewer chunks than the server wrote tokens (%.2f tokens a "
                        + "chunk in those)%s", fewer, withChunks, (double) tokens / chunks, listed == 0 ? ""
                        : String.format(Locale.ROOT, "; with one ITL a chunk, their mean ITL reads %.2f ms long", longer)),
                evidence("requests_coalesced", fewer, "requests", withChunks, "tokens_per_chunk", (double) tokens / chunks,
                        "mean_itl_excess_ms", longer),
                "Tokens the server wrote one by one reached the harness's record together (a buffering proxy, Nagle's "
                        + "algorithm, or a reader that takes several events as one), so chunk timings cannot show token "
                        + "gaps; an ITL a chunk reads long and its count short: split each chunk's gap over its tokens.");
    }

    static HarnessFinding chunksSplit(List<Pair> trusted) {
        int withChunks = 0;
        int more = 0;
        long tokens = 0;
        long chunks = 0;
        for (Pair p : trusted) {
            int c = p.m().chunks();
            if (c > 0 && p.t().completionTokens() > 0) {
                withChunks++;
                if (c > p.t().completionTokens()) {
                    more++;
                    tokens += p.t().completionTokens();
                    chunks += c;
                }
            }
        }
        if (more == 0) {
            return null;
        }
        return new HarnessFinding("chunks_split", String.format(Locale.ROOT,
                "%d of %d requests recorded more chunks than the server wrote tokens (%.2f chunks a token in those): "
                        + "their ITL lists hold gaps that no token made", more, withChunks, (double) chunks / tokens),
                evidence("requests_split", more, "requests", withChunks, "chunks_per_token", (double) chunks / tokens),
                "The harness counts reads or partial lines as chunks (a token's event split over two reads, or the "
                        + "role, usage or [DONE] events counted as tokens), so its ITLs are short and too many.");
    }

    static HarnessFinding eventLoopStalls(List<Pair> trusted) {
        int compared = 0;
        int bunched = 0;
        int requests = 0;
        double worst = 0;
        int serverCompared = 0;
        int serverBunched = 0;
        for (Pair p : trusted) {
            double[] itls = p.m().itlsMs();
            double[] wire = p.t().tokenMs();
            double[] planned = p.t().tokenTimesMs();
            if (itls == null || itls.length != p.t().gaps()) {
                continue;
            }
            boolean hit = false;
            for (int k = 0; k < itls.length; k++) {
                double server = wire[k + 1] - wire[k];
                compared++;
                worst = Math.max(worst, itls[k] - server);
                if (server >= 1 && itls[k] < BUNCHED * server) {
                    bunched++;
                    hit = true;
                }
                double plan = planned[k + 1] - planned[k];
                serverCompared++;
                if (plan >= 1 && server < BUNCHED * plan) {
                    serverBunched++;
                }
            }
            requests += hit ? 1 : 0;
        }
        double share = compared == 0 ? 0 : (double) bunched / compared;
        double machine = serverCompared == 0 ? 0 : (double) serverBunched / serverCompared;
        if (bunched < 3 || share < STALL_SHARE || share <= machine) {
            return null;
        }
        return new HarnessFinding("event_loop_stalls", String.format(Locale.ROOT,
                "%d of %d token gaps (%.1f%%, in %d requests) reached the harness bunched, under %.0f%% of the server's "
                        + "written gap, against %.1f%% of the server's own writes bunched by the machine; the longest "
                        + "wait was %.1f ms over the server's gap", bunched, compared, 100 * share, requests, 100 * BUNCHED,
                100 * machine, worst),
                evidence("bunched_gaps", bunched, "compared_gaps", compared, "requests_affected", requests,
                        "server_bunched_share", machine, "max_gap_excess_ms", worst),
                "The client's event loop was busy (its own work, GC, or no free core) while tokens waited in the socket, "
                        + "then read them together: the spread of its ITL and part of its TPOT are its own delay.");
    }

    static HarnessFinding outputTokensDiffer(Matching matching) {
        RequestMatcher.CountFit fit = matching.outputFit();
        if (Double.isNaN(fit.scale()) || Math.abs(fit.scale() - 1) <= COUNT_TOLERANCE) {
            return null;
        }
        return new HarnessFinding("output_tokens_differ", String.format(Locale.ROOT,
                "the harness counts %.2f output tokens for each the server generated (median over %d requests; over "
                        + "%.0f%% off): its TPOT and token throughput are off by as much", fit.scale(), fit.pairs(),
                100 * COUNT_TOLERANCE),
                evidence("harness_over_server", fit.scale(), "tolerance", COUNT_TOLERANCE, "requests", fit.pairs()),
                "The harness counts output tokens itself instead of reading the server's usage: with a tokenizer of "
                        + "another model family, or by counting chunks, words or characters.");
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
