package dev.infersim.bench.harness;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.infersim.bench.harness.HarnessResults.Listed;
import dev.infersim.bench.harness.HarnessResults.Measured;
import dev.infersim.bench.harness.TruthTimeline.Row;
import dev.infersim.result.NonFiniteAsNull;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Pairs a harness's measured requests with the server's truth rows ({@code check-harness}), by identity first, then by
 * time, then by fitted counts; every pair says how it was found ({@link How}).
 *
 * <ol>
 *   <li>By the server's request id wherever the format keeps it (GuideLLM's {@code response_id}, AIPerf's
 *   {@code x_request_id}, infersim's {@code request_id}, the generic format's {@code id}): exact, for an id that one
 *   truth row has.</li>
 *   <li>By the generated text: the mock's text is a pure function of its seed and the request's number, and the truth log
 *   carries each row's {@link dev.infersim.common.TextKey} ({@code output_text_sha256}), so a harness that saves its text
 *   (vLLM's {@code generated_texts}, GuideLLM's {@code output}) is matched exactly wherever a key is unique on both
 *   sides.</li>
 *   <li>What is left, and only requests that carry no identity (a request whose id or text is in no truth row is not in
 *   this log, and is left unmatched rather than paired by time), by an optimal assignment: the harness's requests, in
 *   send order (by start time where the format has one, else as listed; a format that lists requests as they finished,
 *   llmperf's, against the rows by their last token), and the truth's rows, by arrival, are taken in
 *   windows of {@value #WINDOW} neighbouring requests and each window is solved exactly with the Hungarian algorithm
 *   (Kuhn-Munkres, with potentials). The cost of a pair is a negative log-likelihood under Laplace noise: the residual
 *   of the send instant (the row's arrival against the harness's start, or, without instants, against the arrival of
 *   the row at the request's rank), of the decode span (E2EL - TTFT against the server's first to last token) and,
 *   without instants, of the TTFT (the server's varies with its load; the harness's is it plus its own delay), each
 *   over its robust scale, and the residual of each token count after fitting the harness's counts to the server's
 *   ({@link CountFit}: harness = scale x server, over its own robust spread), never the raw difference: a harness whose
 *   tokenizer counts a third of the server's prompt tokens is paired as well as one that counts the same. The timing
 *   scales and the count fit come from a first assignment (at 1 ms each, and a count fit from the medians or from the
 *   identity pairs); the scales are at least {@value #MIN_SCALE_MS} ms and half a token, so time weighs most where
 *   counts are noisy. A pair in which the harness would have seen its first or last token before the server wrote it is
 *   impossible (beyond {@value #SLACK_MS} ms). The first half of each window is kept and the next window starts
 *   there.</li>
 * </ol>
 *
 * <p>An assigned pair is ambiguous when another choice is at most {@value #AMBIGUITY} (ln 1000: a thousandth as likely)
 * more costly: swapping rows with a neighbouring pair, or taking a row left unmatched. Findings rest on identity pairs
 * and on assigned pairs that are neither ambiguous nor physically impossible (a negative TTFT or E2EL error: the
 * harness cannot see a token before the server sends it, so such an assigned pair is a matching error). An identity
 * pair is certain whatever its errors: a negative error there is the harness's, which findings name.
 */
public final class RequestMatcher {
    static final int WINDOW = 48;
    static final int MARGIN = 16;
    static final double SLACK_MS = 1.0;
    /** At most this many truth rows ahead of the run (earlier runs in the same log) are looked through for its start. */
    static final int MAX_LEAD_ROWS = 1000;
    static final double AMBIGUITY = 6.9;
    static final double MIN_SCALE_MS = 0.25;
    static final double MIN_COUNT_SPREAD = 0.5;
    /** Identity pairs from which the count fit is taken instead of the medians. */
    static final int MIN_FIT_PAIRS = 5;
    /** A negative TTFT or E2EL error beyond this is physically impossible: the pair is a matching error. */
    static final double NEGATIVE_TOLERANCE_MS = 0.05;
    private static final double IMPOSSIBLE = 1e9;
    private static final double LEFT_OUT = 1e6;

    /** How a pair was found. */
    public enum How {
        @JsonProperty("id") ID("request id"),
        @JsonProperty("text") TEXT("output text"),
        @JsonProperty("assignment") ASSIGNMENT("assignment on time and fitted counts");

        private final String words;

        How(String words) {
            this.words = words;
        }

        public String words() {
            return words;
        }
    }

    /** One measured request and the truth row it was matched to, and how. */
    public record Pair(Measured m, Row t, How how, boolean ambiguous) {
        /** An assigned pair. */
        public Pair(Measured m, Row t, boolean ambiguous) {
            this(m, t, How.ASSIGNMENT, ambiguous);
        }

        /** The harness's TTFT minus the server's at the wire. */
        public double ttftErrorMs() {
            return m.ttftMs() - t.ttftMs();
        }

        /** The harness's E2EL minus the server's at the wire. */
        public double e2elErrorMs() {
            return m.e2elMs() - t.e2elMs();
        }

        /** The server read the request this long after the harness started its clock; NaN without instants. */
        public double beforeSendMs() {
            return t.startMs() - m.startMs();
        }

        /** The harness saw the first token this long after the server wrote it; NaN without instants. */
        public double afterFirstTokenMs() {
            return m.firstTokenMs() - t.firstTokenWireMs();
        }

        /**
         * The harness saw no token before the server sent it, and (where it records instants) started its clock no
         * later than the server had the request, within {@value #NEGATIVE_TOLERANCE_MS} ms.
         */
        public boolean physical() {
            return !(ttftErrorMs() < -NEGATIVE_TOLERANCE_MS) && !(e2elErrorMs() < -NEGATIVE_TOLERANCE_MS)
                    && !(beforeSendMs() < -NEGATIVE_TOLERANCE_MS) && !(afterFirstTokenMs() < -NEGATIVE_TOLERANCE_MS);
        }

        /** Found by an id or a text, not by likelihood. */
        public boolean identified() {
            return how != How.ASSIGNMENT;
        }

        /** Findings may rest on this pair. */
        public boolean trusted() {
            return identified() || !ambiguous && physical();
        }
    }

    /**
     * A harness's token counts against the server's: harness = {@code scale} x server, with residuals of robust spread
     * {@code spread} tokens (1.4826 median absolute deviations); {@code pairs} the pairs it was fitted on (0: from the
     * medians of both sides). NaN scale where the harness keeps no count.
     */
    public record CountFit(@NonFiniteAsNull double scale, @NonFiniteAsNull double spread, int pairs) {
        static final CountFit NONE = new CountFit(Double.NaN, Double.NaN, 0);

        /** Cost of a harness count {@code h} against a server count {@code t}: the residual over the spread. */
        double cost(int h, int t) {
            return h < 0 || Double.isNaN(scale) ? 0 : Math.abs(h - scale * t) / spread;
        }

        /** Fitted on pairs of (harness, server) counts. */
        static CountFit of(List<int[]> counts) {
            double[] ratios = counts.stream().filter(c -> c[0] >= 0 && c[1] > 0).mapToDouble(c -> (double) c[0] / c[1])
                    .toArray();
            if (ratios.length == 0) {
                return NONE;
            }
            double scale = median(ratios);
            double[] residuals = counts.stream().filter(c -> c[0] >= 0 && c[1] > 0).mapToDouble(c -> c[0] - scale * c[1])
                    .toArray();
            return new CountFit(scale, Math.max(MIN_COUNT_SPREAD, 1.4826 * mad(residuals)), ratios.length);
        }

        /** From the two sides' medians, before any pair is known; a loose spread, so counts only guide. */
        static CountFit ofMedians(double[] harness, double[] server) {
            double[] h = Arrays.stream(harness).filter(v -> v >= 0).toArray();
            double[] t = Arrays.stream(server).filter(v -> v > 0).toArray();
            if (h.length == 0 || t.length == 0 || median(t) <= 0) {
                return NONE;
            }
            double mh = median(h);
            return new CountFit(mh / median(t), Math.max(1, 0.25 * mh), 0);
        }
    }

    /**
     * The pairs, and what is left: measured requests without a row ({@code measured} in all), the truth rows (by
     * arrival) and which of them were used, the harness's count fits.
     */
    public record Matching(List<Pair> pairs, int measured, List<Row> truth, CountFit outputFit, CountFit promptFit) {
        public int ambiguous() {
            return (int) pairs.stream().filter(Pair::ambiguous).count();
        }

        /** Assigned pairs that are physically impossible. */
        public int matchingErrors() {
            return (int) pairs.stream().filter(p -> !p.identified() && !p.physical()).count();
        }

        public List<Pair> trusted() {
            return pairs.stream().filter(Pair::trusted).toList();
        }

        /** Pairs that may be right: identified, or assigned and physically possible (ambiguous ones too). */
        public int possible() {
            return (int) pairs.stream().filter(p -> p.identified() || p.physical()).count();
        }

        public int unmatchedMeasured() {
            return measured - pairs.size();
        }

        public long count(How how) {
            return pairs.stream().filter(p -> p.how() == how).count();
        }

        /** The truth rows no measured request was matched to, by arrival. */
        public List<Row> unmatchedRows() {
            Set<Row> used = Collections.newSetFromMap(new IdentityHashMap<>());
            pairs.forEach(p -> used.add(p.t()));
            return truth.stream().filter(t -> !used.contains(t)).toList();
        }

        /** When the first matched request reached the server; +infinity with none. */
        public double firstMatchedStartMs() {
            return pairs.stream().mapToDouble(p -> p.t().startMs()).min().orElse(Double.POSITIVE_INFINITY);
        }

        /** When the last matched request reached the server; -infinity with none. */
        public double lastMatchedStartMs() {
            return pairs.stream().mapToDouble(p -> p.t().startMs()).max().orElse(Double.NEGATIVE_INFINITY);
        }

        /** Truth rows that reached the server before the first matched request (a harness's test or warm-up requests). */
        public int truthBeforeFirst() {
            double first = firstMatchedStartMs();
            return (int) unmatchedRows().stream().filter(t -> t.startMs() < first).count();
        }

        /** Truth rows after the first matched request that nothing matched. */
        public int truthOtherUnmatched() {
            return unmatchedRows().size() - truthBeforeFirst();
        }
    }

    private RequestMatcher() {
    }

    /** Matches by identity, then by assignment with the timing physics; the requests listed in send order. */
    public static Matching match(List<Measured> measured, List<Row> truth) {
        return match(measured, truth, Listed.BY_SEND, true);
    }

    /** Matches by identity, then by assignment with the timing physics; the requests listed as {@code listed} says. */
    public static Matching match(List<Measured> measured, List<Row> truth, Listed listed) {
        return match(measured, truth, listed, true);
    }

    /**
     * {@code physics} false: an assignment that also takes pairs a working clock could not give (a negative TTFT
     * error), to see how a harness's errors lie when the physical one matched too little.
     */
    static Matching match(List<Measured> measured, List<Row> truth, Listed listed, boolean physics) {
        Identity id = Identity.of(measured, truth);
        List<Pair> pairs = new ArrayList<>(id.pairs());
        Set<Row> used = id.used();
        Set<Measured> done = id.done();
        Map<String, List<Row>> byId = id.byId();
        Map<String, List<Row>> byText = id.byText();
        List<Pair> identity = List.copyOf(pairs);
        // Requests whose identity is in no row are not in this log: only those without one (or a shared one) are left
        // to the assignment.
        boolean keyed = truth.stream().anyMatch(t -> t.textKey() != null);
        List<Measured> rest = measured.stream().filter(m -> !done.contains(m) && !identifiedElsewhere(m, byId, byText, keyed))
                .collect(java.util.stream.Collectors.toCollection(ArrayList::new));
        boolean byCompletion = listed == Listed.BY_COMPLETION && !rest.stream().allMatch(m -> Double.isFinite(m.startMs()));
        List<Row> free = truth.stream().filter(t -> !used.contains(t))
                .sorted(byCompletion ? Comparator.comparingDouble(Row::lastTokenWireMs) : (a, b) -> 0).toList();
        CountFit out = fit(identity, true);
        CountFit prompt = fit(identity, false);
        if (!rest.isEmpty() && !free.isEmpty()) {
            boolean timed = rest.stream().allMatch(m -> Double.isFinite(m.startMs()));
            if (timed) {
                rest.sort(Comparator.comparingDouble(Measured::startMs));
            }
            CountFit out0 = out.pairs() >= MIN_FIT_PAIRS ? out : CountFit.ofMedians(
                    rest.stream().mapToDouble(Measured::outputTokens).toArray(),
                    free.stream().mapToDouble(Row::completionTokens).toArray());
            CountFit prompt0 = prompt.pairs() >= MIN_FIT_PAIRS ? prompt : CountFit.ofMedians(
                    rest.stream().mapToDouble(Measured::promptTokens).toArray(),
                    free.stream().mapToDouble(Row::promptTokens).toArray());
            Assignment first = new Assignment(rest, free, timed, byCompletion, physics, Scales.UNIT, out0, prompt0);
            List<Pair> firstPairs = first.solve();
            List<Pair> all = new ArrayList<>(identity);
            all.addAll(firstPairs);
            CountFit out1 = out.pairs() >= MIN_FIT_PAIRS ? out : fit(all, true);
            CountFit prompt1 = prompt.pairs() >= MIN_FIT_PAIRS ? prompt : fit(all, false);
            pairs.addAll(new Assignment(rest, free, timed, byCompletion, physics, first.scales(), out1, prompt1).solve());
            out = out.pairs() >= MIN_FIT_PAIRS ? out : fit(pairs, true);
            prompt = prompt.pairs() >= MIN_FIT_PAIRS ? prompt : fit(pairs, false);
        }
        return new Matching(pairs, measured.size(), truth, out, prompt);
    }

    /** The pairs found by id or text alone, for what must be known before the assignment (the harness's time unit). */
    static List<Pair> identityPairs(List<Measured> measured, List<Row> truth) {
        return Identity.of(measured, truth).pairs();
    }

    /** The identity step: pairs by id, then by text, the rows and requests they took, and the indexes by id and text. */
    private record Identity(List<Pair> pairs, Set<Row> used, Set<Measured> done, Map<String, List<Row>> byId,
                            Map<String, List<Row>> byText) {
        static Identity of(List<Measured> measured, List<Row> truth) {
            List<Pair> pairs = new ArrayList<>();
            Set<Row> used = Collections.newSetFromMap(new IdentityHashMap<>());
            Set<Measured> done = Collections.newSetFromMap(new IdentityHashMap<>());
            Map<String, List<Row>> byId = new HashMap<>();
            for (Row t : truth) {
                if (t.index() == 0) {
                    byId.computeIfAbsent(t.requestId(), k -> new ArrayList<>()).add(t);
                }
            }
            for (Measured m : measured) {
                List<Row> rows = m.requestId() == null ? null : byId.get(m.requestId());
                if (rows != null && rows.size() == 1 && used.add(rows.get(0))) {
                    pairs.add(new Pair(m, rows.get(0), How.ID, false));
                    done.add(m);
                }
            }
            Map<String, List<Row>> byText = new HashMap<>();
            for (Row t : truth) {
                if (t.textKey() != null && !used.contains(t)) {
                    byText.computeIfAbsent(t.textKey(), k -> new ArrayList<>()).add(t);
                }
            }
            Map<String, Integer> measuredTexts = new HashMap<>();
            measured.stream().filter(m -> !done.contains(m) && m.textKey() != null)
                    .forEach(m -> measuredTexts.merge(m.textKey(), 1, Integer::sum));
            for (Measured m : measured) {
                List<Row> rows = m.textKey() == null || done.contains(m) ? null : byText.get(m.textKey());
                if (rows != null && rows.size() == 1 && measuredTexts.get(m.textKey()) == 1 && used.add(rows.get(0))) {
                    pairs.add(new Pair(m, rows.get(0), How.TEXT, false));
                    done.add(m);
                }
            }
            return new Identity(pairs, used, done, byId, byText);
        }
    }

    /**
     * The request carries an identity that no row shares (an id, or a text where the log keys texts): it was not served
     * in this log's run.
     */
    private static boolean identifiedElsewhere(Measured m, Map<String, List<Row>> byId, Map<String, List<Row>> byText,
                                               boolean keyed) {
        boolean hasId = m.requestId() != null;
        boolean hasText = m.textKey() != null && keyed;
        if (!hasId && !hasText) {
            return false;
        }
        boolean idShared = hasId && byId.containsKey(m.requestId()) && byId.get(m.requestId()).size() > 1;
        boolean textShared = hasText && byText.containsKey(m.textKey());
        return !idShared && !textShared;
    }

    private static CountFit fit(List<Pair> pairs, boolean output) {
        return CountFit.of(pairs.stream().filter(p -> !p.ambiguous())
                .map(p -> output ? new int[]{p.m().outputTokens(), p.t().completionTokens()}
                        : new int[]{p.m().promptTokens(), p.t().promptTokens()}).toList());
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    static double mad(double[] v) {
        double m = median(v);
        return median(Arrays.stream(v).map(x -> Math.abs(x - m)).toArray());
    }

    /** Centres and scales of the timing residuals (decode span, send, and TTFT where no instant is kept), ms. */
    private record Scales(double span, double spanScale, double send, double sendScale, double ttft, double ttftScale) {
        static final Scales UNIT = new Scales(0, 1, 0, 1, 0, 1);
    }

    /** The windowed exact assignment of one run. */
    private static final class Assignment {
        private final List<Measured> ms;
        private final List<Row> rows;
        private final boolean timed;
        /** Untimed requests listed as they finished: ranked against the rows' last tokens, not their arrivals. */
        private final boolean byCompletion;
        private final boolean physics;
        private final Scales scales;
        private final CountFit output;
        private final CountFit prompt;
        private final int[] rowOf;
        private final int[] offsetAt;
        private final boolean[] taken;

        Assignment(List<Measured> ms, List<Row> rows, boolean timed, boolean byCompletion, boolean physics, Scales scales,
                   CountFit output, CountFit prompt) {
            this.ms = ms;
            this.rows = rows;
            this.timed = timed;
            this.byCompletion = byCompletion;
            this.physics = physics;
            this.scales = scales;
            this.output = output;
            this.prompt = prompt;
            rowOf = new int[ms.size()];
            offsetAt = new int[ms.size()];
            taken = new boolean[rows.size()];
            Arrays.fill(rowOf, -1);
        }

        List<Pair> solve() {
            int n = ms.size();
            int offset = initialOffset();
            int matched = 0;
            for (int i = 0; i < n; ) {
                int end = Math.min(n, i + WINDOW);
                int spare = Math.max(0, rows.size() - matched - (n - i));
                int lo = Math.max(0, i + offset - MARGIN);
                int hi = Math.min(rows.size(), end + offset + MARGIN + Math.min(spare, WINDOW));
                List<Integer> candidates = new ArrayList<>();
                for (int j = lo; j < hi; j++) {
                    if (!taken[j]) {
                        candidates.add(j);
                    }
                }
                for (int r = i; r < end; r++) {
                    offsetAt[r] = offset;
                }
                double[][] cost = new double[end - i][candidates.size() + end - i];
                for (int r = 0; r < end - i; r++) {
                    for (int c = 0; c < cost[r].length; c++) {
                        cost[r][c] = c < candidates.size() ? cost(i + r, candidates.get(c)) : LEFT_OUT;
                    }
                }
                int[] chosen = hungarian(cost);
                int keep = end == n ? end - i : Math.max(1, (end - i) / 2);
                List<Integer> shifts = new ArrayList<>();
                for (int r = 0; r < keep; r++) {
                    int c = chosen[r];
                    if (c < candidates.size() && cost[r][c] < LEFT_OUT) {
                        int j = candidates.get(c);
                        rowOf[i + r] = j;
                        taken[j] = true;
                        matched++;
                        shifts.add(j - (i + r));
                    }
                }
                if (!shifts.isEmpty()) {
                    shifts.sort(null);
                    offset = shifts.get(shifts.size() / 2);
                }
                i += keep;
            }
            List<Pair> pairs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (rowOf[i] >= 0) {
                    pairs.add(new Pair(ms.get(i), rows.get(rowOf[i]), How.ASSIGNMENT, ambiguous(i)));
                }
            }
            return pairs;
        }

        /** Robust centres and scales of this assignment's timing residuals, for a second one. */
        Scales scales() {
            List<Double> span = new ArrayList<>();
            List<Double> send = new ArrayList<>();
            List<Double> ttft = new ArrayList<>();
            for (int i = 0; i < ms.size(); i++) {
                if (rowOf[i] < 0) {
                    continue;
                }
                Measured m = ms.get(i);
                Row t = rows.get(rowOf[i]);
                double s = m.e2elMs() - m.ttftMs() - t.decodeMs();
                if (Double.isFinite(s)) {
                    span.add(s);
                }
                send.add(timed ? t.startMs() - m.startMs() : byCompletion ? m.e2elMs() - t.e2elMs() : m.ttftMs() - t.ttftMs());
                ttft.add(m.ttftMs() - t.ttftMs());
            }
            double[] sp = centreAndScale(span);
            double[] se = centreAndScale(send);
            double[] tt = centreAndScale(ttft);
            return new Scales(sp[0], sp[1], timed ? se[0] : 0, se[1], tt[0], tt[1]);
        }

        private static double[] centreAndScale(List<Double> v) {
            if (v.isEmpty()) {
                return new double[]{0, 1};
            }
            double[] a = v.stream().mapToDouble(Double::doubleValue).toArray();
            return new double[]{median(a), Math.max(MIN_SCALE_MS, 1.4826 * mad(a))};
        }

        /** Truth rows ahead of the first measured one (a harness's test request, warm-ups): the cheapest start. */
        private int initialOffset() {
            int extra = Math.min(MAX_LEAD_ROWS, Math.max(0, rows.size() - ms.size()));
            int best = 0;
            double bestCost = Double.POSITIVE_INFINITY;
            for (int off = 0; off <= extra; off++) {
                double sum = 0;
                for (int i = 0; i < Math.min(ms.size(), WINDOW) && i + off < rows.size(); i++) {
                    sum += Math.min(LEFT_OUT, fit(ms.get(i), rows.get(i + off)));
                }
                if (sum < bestCost) {
                    bestCost = sum;
                    best = off;
                }
            }
            return best;
        }

        /** Cost of measured request i taking truth row j; IMPOSSIBLE where physics forbids it. */
        double cost(int i, int j) {
            Measured m = ms.get(i);
            Row t = rows.get(j);
            double c = fit(m, t);
            if (c >= IMPOSSIBLE) {
                return c;
            }
            if (timed) {
                double lead = t.startMs() - m.startMs();
                return physics && lead < -SLACK_MS ? IMPOSSIBLE : c + Math.abs(lead - scales.send()) / scales.sendScale();
            }
            int k = Math.max(0, Math.min(rows.size() - 1, i + offsetAt[i]));
            double rank = byCompletion ? t.lastTokenWireMs() - rows.get(k).lastTokenWireMs()
                    : t.startMs() - rows.get(k).startMs();
            return c + Math.abs(rank) / scales.sendScale();
        }

        /** The cost terms that need no instant: timing physics, decode span, fitted token counts. */
        private double fit(Measured m, Row t) {
            if (physics && (m.ttftMs() - t.ttftMs() < -SLACK_MS || m.e2elMs() - t.e2elMs() < -SLACK_MS)) {
                return IMPOSSIBLE;
            }
            double c = 0;
            double span = m.e2elMs() - m.ttftMs();
            if (Double.isFinite(span)) {
                c += Math.abs(span - t.decodeMs() - scales.span()) / scales.spanScale();
            }
            if (!timed) {
                // Without instants the TTFT itself tells rows apart: the server's varies with its load, the harness's is
                // it plus the harness's own delay.
                c += Math.abs(m.ttftMs() - t.ttftMs() - scales.ttft()) / scales.ttftScale();
            }
            return c + output.cost(m.outputTokens(), t.completionTokens()) + prompt.cost(m.promptTokens(), t.promptTokens());
        }

        /** Another neighbour's row, or a row left over, would cost at most AMBIGUITY more. */
        private boolean ambiguous(int i) {
            int j = rowOf[i];
            double own = cost(i, j);
            for (int o = Math.max(0, i - WINDOW / 2); o < Math.min(ms.size(), i + WINDOW / 2 + 1); o++) {
                int k = rowOf[o];
                if (o == i || k < 0) {
                    continue;
                }
                double swapped = cost(i, k) + cost(o, j);
                if (swapped < IMPOSSIBLE && swapped <= own + cost(o, k) + AMBIGUITY) {
                    return true;
                }
            }
            for (int k = Math.max(0, j - MARGIN); k < Math.min(rows.size(), j + MARGIN + 1); k++) {
                if (!taken[k] && cost(i, k) <= own + AMBIGUITY) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Minimum-cost assignment of every row to a distinct column (rows <= columns), by the Hungarian algorithm with
     * potentials (O(rows^2 x columns)); returns each row's column.
     */
    static int[] hungarian(double[][] a) {
        int n = a.length;
        int m = n == 0 ? 0 : a[0].length;
        double[] u = new double[n + 1];
        double[] v = new double[m + 1];
        int[] p = new int[m + 1];
        int[] way = new int[m + 1];
        double[] minv = new double[m + 1];
        boolean[] used = new boolean[m + 1];
        for (int i = 1; i <= n; i++) {
            p[0] = i;
            int j0 = 0;
            Arrays.fill(minv, Double.POSITIVE_INFINITY);
            Arrays.fill(used, false);
            do {
                used[j0] = true;
                int i0 = p[j0];
                int j1 = 0;
                double delta = Double.POSITIVE_INFINITY;
                for (int j = 1; j <= m; j++) {
                    if (!used[j]) {
                        double cur = a[i0 - 1][j - 1] - u[i0] - v[j];
                        if (cur < minv[j]) {
                            minv[j] = cur;
                            way[j] = j0;
                        }
                        if (minv[j] < delta) {
                            delta = minv[j];
                            j1 = j;
                        }
                    }
                }
                for (int j = 0; j <= m; j++) {
                    if (used[j]) {
                        u[p[j]] += delta;
                        v[j] -= delta;
                    } else {
                        minv[j] -= delta;
                    }
                }
                j0 = j1;
            } while (p[j0] != 0);
            do {
                int j1 = way[j0];
                p[j0] = p[j1];
                j0 = j1;
            } while (j0 != 0);
        }
        int[] column = new int[n];
        for (int j = 1; j <= m; j++) {
            if (p[j] != 0) {
                column[p[j] - 1] = j - 1;
            }
        }
        return column;
    }
}
