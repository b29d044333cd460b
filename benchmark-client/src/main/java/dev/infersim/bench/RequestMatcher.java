package dev.infersim.bench;

import dev.infersim.bench.HarnessResults.Measured;
import dev.infersim.bench.TruthTimeline.Row;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Pairs a harness's measured requests with the server's truth rows ({@code check-harness}).
 *
 * <p>By the server's request id wherever the format keeps it (GuideLLM's {@code response_id}, AIPerf's
 * {@code x_request_id}, infersim's {@code request_id}): exact. Otherwise (vLLM's {@code benchmark_serving.py} keeps
 * none) by an optimal assignment: the harness's requests, in send order (by start time where the format has one, else
 * as listed), and the truth's rows, by arrival, are taken in windows of {@value #WINDOW} neighbouring requests and
 * each window is solved exactly with the Hungarian algorithm (Kuhn-Munkres, with potentials). The cost of a pair is a
 * negative log-likelihood under Laplace noise: the residual of the decode span (E2EL - TTFT against the server's first
 * to last token) and of the send instant (the row's arrival against the harness's start, or, without instants, against
 * the arrival of the row at the request's rank), each over its robust scale, plus {@value #TOKEN_COST} per token that
 * the prompt or output counts differ by. The scales (1.4826 median absolute deviations, at least
 * {@value #MIN_SCALE_MS} ms) come from a first assignment at 1 ms each, the send instant's from the TTFT error where
 * there is no instant (a harness's own delays are what reorders its sends). A pair in which the harness would have
 * seen its first or last token before the server sent it is impossible (beyond {@value #SLACK_MS} ms). The first half
 * of each window is kept and the next window starts there.
 *
 * <p>A kept pair is ambiguous when another choice is at most {@value #AMBIGUITY} (ln 1000: a thousandth as likely)
 * more costly: swapping rows with a neighbouring pair, or taking a row left unmatched. Findings never rest on
 * ambiguous pairs, nor on pairs whose TTFT or E2EL error is negative (a matching error: the harness cannot see a token
 * before the server sends it).
 */
public final class RequestMatcher {
    static final int WINDOW = 48;
    static final int MARGIN = 16;
    static final double SLACK_MS = 1.0;
    /** At most this many truth rows ahead of the run (earlier runs in the same log) are looked through for its start. */
    static final int MAX_LEAD_ROWS = 1000;
    static final double TOKEN_COST = 10;
    static final double AMBIGUITY = 6.9;
    static final double MIN_SCALE_MS = 0.25;
    /** A negative TTFT or E2EL error beyond this is physically impossible: the pair is a matching error. */
    static final double NEGATIVE_TOLERANCE_MS = 0.05;
    private static final double IMPOSSIBLE = 1e9;
    private static final double LEFT_OUT = 1e6;

    /** One measured request and the truth row it was matched to. */
    public record Pair(Measured m, Row t, boolean ambiguous) {
        public double ttftErrorMs() {
            return m.ttftMs() - t.ttftMs();
        }

        public double e2elErrorMs() {
            return m.e2elMs() - t.e2elMs();
        }

        /**
         * The harness saw no token before the server sent it, and (where it records instants) started its clock no
         * later than the server had the request, within {@value #NEGATIVE_TOLERANCE_MS} ms.
         */
        public boolean physical() {
            return !(ttftErrorMs() < -NEGATIVE_TOLERANCE_MS) && !(e2elErrorMs() < -NEGATIVE_TOLERANCE_MS)
                    && !(t.arrivalMs() - m.startMs() < -NEGATIVE_TOLERANCE_MS)
                    && !(m.firstTokenMs() - t.firstTokenMs() < -NEGATIVE_TOLERANCE_MS);
        }

        /** Findings may rest on this pair. */
        public boolean trusted() {
            return !ambiguous && physical();
        }
    }

    /**
     * The pairs, how they were found, and what is left: measured requests without a row, truth rows arriving before
     * the first matched one (a harness's test or warm-up requests) and after it that matched nothing.
     */
    public record Matching(String method, List<Pair> pairs, int unmatchedMeasured, int truthRows, int truthBeforeFirst,
                           int truthOtherUnmatched) {
        public int ambiguous() {
            return (int) pairs.stream().filter(Pair::ambiguous).count();
        }

        public int matchingErrors() {
            return (int) pairs.stream().filter(p -> !p.physical()).count();
        }

        public List<Pair> trusted() {
            return pairs.stream().filter(Pair::trusted).toList();
        }
    }

    private RequestMatcher() {
    }

    public static Matching match(List<Measured> measured, List<Row> truth) {
        Map<String, Row> byId = new HashMap<>();
        for (Row t : truth) {
            if (t.index() == 0) {
                byId.put(t.requestId(), t);
            }
        }
        long known = measured.stream().filter(m -> m.requestId() != null && byId.containsKey(m.requestId())).count();
        if (known > 0 && 2 * known >= measured.size()) {
            List<Pair> pairs = new ArrayList<>();
            for (Measured m : measured) {
                Row t = m.requestId() == null ? null : byId.get(m.requestId());
                if (t != null) {
                    pairs.add(new Pair(m, t, false));
                }
            }
            return summarize("request id", pairs, measured.size(), truth);
        }
        List<Measured> ordered = new ArrayList<>(measured);
        boolean timed = !ordered.isEmpty() && ordered.stream().allMatch(m -> Double.isFinite(m.startMs()));
        if (timed) {
            ordered.sort(Comparator.comparingDouble(Measured::startMs));
        }
        Assignment first = new Assignment(ordered, truth, timed, Scales.UNIT);
        first.solve();
        List<Pair> pairs = new Assignment(ordered, truth, timed, first.scales()).solve();
        return summarize(timed ? "assignment on send time, decode span and token counts"
                : "assignment on send order, decode span and token counts", pairs, measured.size(), truth);
    }

    private static Matching summarize(String method, List<Pair> pairs, int measured, List<Row> truth) {
        double first = pairs.stream().mapToDouble(p -> p.t().arrivalMs()).min().orElse(Double.POSITIVE_INFINITY);
        java.util.Set<Row> used = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        pairs.forEach(p -> used.add(p.t()));
        int before = 0;
        int other = 0;
        for (Row t : truth) {
            if (!used.contains(t)) {
                if (t.arrivalMs() < first) {
                    before++;
                } else {
                    other++;
                }
            }
        }
        return new Matching(method, pairs, measured - pairs.size(), truth.size(), before, other);
    }

    /** Centres and scales of the two timing residuals, ms. */
    private record Scales(double span, double spanScale, double send, double sendScale) {
        static final Scales UNIT = new Scales(0, 1, 0, 1);
    }

    /** The windowed exact assignment of one run. */
    private static final class Assignment {
        private final List<Measured> ms;
        private final List<Row> rows;
        private final boolean timed;
        private final Scales scales;
        private final int[] rowOf;
        private final int[] offsetAt;
        private final boolean[] taken;

        Assignment(List<Measured> ms, List<Row> rows, boolean timed, Scales scales) {
            this.ms = ms;
            this.rows = rows;
            this.timed = timed;
            this.scales = scales;
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
                    pairs.add(new Pair(ms.get(i), rows.get(rowOf[i]), ambiguous(i)));
                }
            }
            return pairs;
        }

        /** Robust centres and scales of this assignment's residuals, for a second one. */
        Scales scales() {
            List<Double> span = new ArrayList<>();
            List<Double> send = new ArrayList<>();
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
                send.add(timed ? t.arrivalMs() - m.startMs() : m.ttftMs() - t.ttftMs());
            }
            double[] sp = centreAndScale(span);
            double[] se = centreAndScale(send);
            return new Scales(sp[0], sp[1], timed ? se[0] : 0, se[1]);
        }

        private static double[] centreAndScale(List<Double> v) {
            if (v.isEmpty()) {
                return new double[]{0, 1};
            }
            double median = median(v);
            List<Double> dev = v.stream().map(x -> Math.abs(x - median)).toList();
            return new double[]{median, Math.max(MIN_SCALE_MS, 1.4826 * median(dev))};
        }

        private static double median(List<Double> v) {
            double[] s = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
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
                double lead = t.arrivalMs() - m.startMs();
                return lead < -SLACK_MS ? IMPOSSIBLE : c + Math.abs(lead - scales.send()) / scales.sendScale();
            }
            int k = Math.max(0, Math.min(rows.size() - 1, i + offsetAt[i]));
            return c + Math.abs(t.arrivalMs() - rows.get(k).arrivalMs()) / scales.sendScale();
        }

        /** The cost terms that need no instant: timing physics, decode span, token counts. */
        private double fit(Measured m, Row t) {
            if (m.ttftMs() - t.ttftMs() < -SLACK_MS || m.e2elMs() - t.e2elMs() < -SLACK_MS) {
                return IMPOSSIBLE;
            }
            double c = 0;
            double span = m.e2elMs() - m.ttftMs();
            if (Double.isFinite(span)) {
                c += Math.abs(span - t.decodeMs() - scales.span()) / scales.spanScale();
            }
            if (m.outputTokens() >= 0) {
                c += TOKEN_COST * Math.abs(m.outputTokens() - t.completionTokens());
            }
            if (m.promptTokens() >= 0) {
                c += TOKEN_COST * Math.abs(m.promptTokens() - t.promptTokens());
            }
            return c;
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
