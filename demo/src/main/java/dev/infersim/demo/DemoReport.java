package dev.infersim.demo;

import dev.infersim.result.MeanInterval;
import dev.infersim.result.PercentileInterval;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The demo's side-by-side table of measured, simulated and predicted numbers, the knee each method finds and the
 * highest rate meeting the TTFT p99 objective, each with its 95% interval, whether those conclusions are stable, and
 * plain words on where the methods differ.
 *
 * <p>The knee is the engine's capacity: the requests served per second ({@link LateServiceRate}) over the second half
 * of the sending of the most overloaded run (served under 90% of the rate sent). Below the knee requests are served as
 * fast as they are sent; past it at the engine's capacity at the batch the queue keeps full, which a run of a few
 * seconds reaches only well past the knee (which is why each rate sends for a fixed time rather than a fixed count).
 * Its interval: batch means over windows of that half, pooled over repeats of the rate (measured), or the t interval
 * across the simulated replications at that rate. The prediction's knee is its closed form's saturation rate. A sweep that never
 * overloads has no knee.
 *
 * <p>The highest rate meeting the objective is where the TTFT p99 curve crosses it ({@link ObjectiveCrossing}): through
 * the valid measured runs with their p99 intervals, through the simulated replications' means with theirs, and on the
 * prediction's curve; the intervals made monotone in the rate first, as the percentiles they bound are. A measured rate
 * whose requests show the objective met ({@link ObjectiveMisses}: under 1% of them over it, at 97.5%, repeats pooled)
 * bounds the upper curve by the objective there even where its p99's own interval is open above: on a busy machine a
 * few slow requests that came together open it at every rate below the knee, which left the interval open below
 * though hundreds of requests all met the objective. Runs flagged invalid are left out of the measured conclusions and
 * named, never taken as misses.
 *
 * <p>Stable: the measured knee within +-{@value #KNEE_TOLERANCE} of itself and the objective's rate within
 * +-{@value #OBJECTIVE_TOLERANCE}, at 95%; until then the demo adds runs where they narrow the interval most.
 */
final class DemoReport {
    static final double KNEE_TOLERANCE = 0.05;
    static final double OBJECTIVE_TOLERANCE = 0.10;
    /** The percentile the TTFT objective bounds. */
    static final double OBJECTIVE_PERCENTILE = 99;
    /** Rates closer than this share count as the same rate (a repeat). */
    private static final double SAME_RATE = 0.005;
    /** A new rate is never put closer than this share to one already measured: it would teach nothing new. */
    private static final double MIN_GAP = 0.02;

    private final List<DemoRow> rows;
    private final double predictedSaturation;
    private final double simulatedSaturation;
    private final double timeScale;
    private final double sloTtftP99Ms;
    private final String predictor;
    private final boolean fixedTiming;
    private final ReplicatedSweep simulatedCurve;
    private final List<DemoPrediction.Point> predictedCurve;
    private final Stability stability;
    private final int extraRuns;

    /**
     * @param simulatedCurve the replicated simulations, or null (then the simulated conclusions come from the runs
     *                       paired with the measured ones)
     * @param predictedCurve the prediction up to its asymptote; empty to use the prediction at the swept rates
     * @param stability      what the sweep concluded of its own stability, or null while it is still running
     */
    DemoReport(List<DemoRow> rows, double predictedSaturation, double simulatedSaturation, double timeScale,
               double sloTtftP99Ms, String predictor, boolean fixedTiming, ReplicatedSweep simulatedCurve,
               List<DemoPrediction.Point> predictedCurve, Stability stability, int extraRuns) {
        this.rows = rows.stream().sorted(Comparator.comparingDouble(DemoRow::rate)).toList();
        this.predictedSaturation = predictedSaturation;
        this.simulatedSaturation = simulatedSaturation;
        this.timeScale = timeScale;
        this.sloTtftP99Ms = sloTtftP99Ms;
        this.predictor = predictor;
        this.fixedTiming = fixedTiming;
        this.simulatedCurve = simulatedCurve;
        this.predictedCurve = predictedCurve;
        this.stability = stability;
        this.extraRuns = extraRuns;
    }

    List<DemoRow> rows() {
        return rows;
    }

    double sloTtftP99Ms() {
        return sloTtftP99Ms;
    }

    static final Function<DemoRow, DemoSide> MEASURED = DemoRow::measured;
    static final Function<DemoRow, DemoSide> SIMULATED = DemoRow::simulated;
    static final Function<DemoRow, DemoSide> PREDICTED = DemoRow::predicted;

    /** The rows a method's conclusions rest on: every row, less the measured runs flagged invalid. */
    private List<DemoRow> usable(Function<DemoRow, DemoSide> side) {
        return side == MEASURED ? rows.stream().filter(DemoRow::measuredValid).toList() : rows;
    }

    /**
     * The rows the measured objective's rate rests on: the valid runs, less those where this machine's noise decides it
     * ({@link DemoRow#machineDecidesObjective}).
     */
    private List<DemoRow> objectiveRows() {
        return rows.stream().filter(r -> r.measuredValid() && !r.machineDecidesObjective(sloTtftP99Ms)).toList();
    }

    /**
     * The side a method's knee rests on at a row, or null: for the measured method the client's run, or where the
     * client flagged it invalid the server's own account of it ({@link DemoRow#measuredKneeSide}).
     */
    private static DemoSide kneeSide(Function<DemoRow, DemoSide> side, DemoRow r) {
        return side == MEASURED ? r.measuredKneeSide() : side.apply(r);
    }

    /** The most overloaded row of a method (the highest rate among the overloaded), or null. */
    private DemoRow kneeRow(Function<DemoRow, DemoSide> side) {
        DemoRow best = null;
        for (DemoRow r : rows) {
            DemoSide s = kneeSide(side, r);
            if (s != null && s.overloaded() && (best == null || r.rate() > best.rate())) {
                best = r;
            }
        }
        return best;
    }

    /** The measured knee, req/s of model time, with its interval; none when no valid run was overloaded. */
    RateEstimate measuredKnee() {
        return sweepKnee(MEASURED);
    }

    /**
     * The simulated knee: across the replications at the measured knee's rate (or at the most overloaded simulated rate
     * where there is none, or where the simulation was not overloaded at that rate), or from the paired runs by the
     * measured rule when there are no replications.
     */
    RateEstimate simulatedKnee() {
        if (simulatedCurve == null) {
            return sweepKnee(SIMULATED);
        }
        DemoRow measured = kneeRow(MEASURED);
        ReplicatedSweep.Point at = measured == null ? null : simulatedCurve.at(measured.rate());
        // A measured run can look overloaded where the engine was not (a client short of CPU sends late and serves
        // less): the simulated knee then comes from the simulated overload, not from a rate the engine kept up with.
        if (at == null || !at.mean().overloaded()) {
            at = null;
            for (ReplicatedSweep.Point p : simulatedCurve.points()) {
                at = p.mean().overloaded() ? p : at;
            }
        }
        return at == null || !at.mean().overloaded() ? RateEstimate.NONE
                : RateEstimate.of(MeanInterval.of(at.mean().serviceWindows()));
    }

    RateEstimate predictedKnee() {
        return RateEstimate.exact(predictedSaturation);
    }

    /** The knee row's service rate windows, pooled over every usable run at its rate (repeats). */
    private RateEstimate sweepKnee(Function<DemoRow, DemoSide> side) {
        DemoRow knee = kneeRow(side);
        if (knee == null) {
            return RateEstimate.NONE;
        }
        List<Double> windows = new ArrayList<>();
        for (DemoRow r : rows) {
            DemoSide s = kneeSide(side, r);
            if (s != null && Math.abs(r.rate() / knee.rate() - 1) < SAME_RATE) {
                for (double w : s.serviceWindows()) {
                    windows.add(w);
                }
            }
        }
        MeanInterval m = MeanInterval.of(windows.stream().mapToDouble(Double::doubleValue).toArray());
        return m.estimates() >= 2 ? RateEstimate.of(m)
                : new RateEstimate(kneeSide(side, knee).lateServiceRatePerS(), Double.NaN, Double.NaN);
    }

    /** The highest rate whose TTFT p99 meets the objective, with its interval (see {@link ObjectiveCrossing}). */
    RateEstimate highestRateMeetingSlo(Function<DemoRow, DemoSide> side) {
        if (side == SIMULATED && simulatedCurve != null) {
            return crossing(simulatedCurve.points().stream().map(p -> new DemoPrediction.Point(p.rate(), p.mean())).toList(),
                    null);
        }
        if (side == PREDICTED && !predictedCurve.isEmpty()) {
            return crossing(predictedCurve, null);
        }
        List<DemoRow> usable = side == MEASURED ? objectiveRows() : usable(side);
        return crossing(usable.stream().map(r -> new DemoPrediction.Point(r.rate(), side.apply(r))).toList(),
                side == MEASURED ? usable.stream().map(this::showsObjectiveMet).toList() : null);
    }

    /**
     * Whether the valid measured runs at a row's rate (repeats pooled) show TTFT p99 within the objective: their
     * share of requests over it below 1% at 97.5% ({@link ObjectiveMisses}).
     */
    private boolean showsObjectiveMet(DemoRow row) {
        return objectiveMisses(row).showsMet(OBJECTIVE_PERCENTILE);
    }

    private ObjectiveMisses objectiveMisses(DemoRow row) {
        return ObjectiveMisses.pooled(objectiveRows().stream()
                .filter(r -> Math.abs(r.rate() / row.rate() - 1) < SAME_RATE)
                .map(r -> ObjectiveMisses.of(r.measuredTtftMs(), sloTtftP99Ms)).toList());
    }

    /**
     * @param shownMet for each point, whether its requests show the objective met (then the upper curve lies within
     *                 the objective there, whatever the p99's own interval, which a few slow requests that came
     *                 together leave open above); null where that is not known (the simulated and predicted curves)
     */
    private RateEstimate crossing(List<DemoPrediction.Point> points, List<Boolean> shownMet) {
        int n = points.size();
        double[] rates = new double[n];
        double[] values = new double[n];
        double[] lows = new double[n];
        double[] highs = new double[n];
        for (int i = 0; i < n; i++) {
            DemoSide s = points.get(i).side();
            rates[i] = points.get(i).rate();
            values[i] = s.ttftP99Ms();
            boolean spanned = !Double.isNaN(s.ttftP99().low());
            lows[i] = spanned ? s.ttftP99().low() : values[i];
            highs[i] = spanned ? s.ttftP99().high() : values[i];
            if (shownMet != null && shownMet.get(i) && !(highs[i] <= sloTtftP99Ms)) {
                highs[i] = sloTtftP99Ms;
            }
        }
        // Latency percentiles do not fall as load rises (the queue is stochastically monotone in the arrival rate), so a
        // heavier rate's upper bound also bounds every lighter one, and a lighter rate's lower bound every heavier one:
        // a light run of a few hundred requests, too few to bound its own p99, is bounded by its neighbours'.
        for (int i = n - 2; i >= 0; i--) {
            highs[i] = Math.min(highs[i], highs[i + 1]);
        }
        for (int i = 1; i < n; i++) {
            lows[i] = Math.max(lows[i], lows[i - 1]);
        }
        // By the same argument a value outside those bounds is noise (a light run whose few slow requests a busy
        // machine made): held within them, so that the estimate lies inside its own interval.
        for (int i = 0; i < n; i++) {
            values[i] = Math.max(lows[i], Math.min(values[i], highs[i]));
        }
        return ObjectiveCrossing.highestRateMeeting(rates, values, lows, highs, sloTtftP99Ms);
    }

    /**
     * Whether the measured conclusions are stable, and if not which run would narrow them most: a run flagged invalid
     * again (once), a rate bisecting toward the objective's crossing, or a repeat of the knee's rate.
     */
    Stability stability(int extraRunsSoFar, int maxExtraRuns) {
        RateEstimate knee = measuredKnee();
        RateEstimate slo = highestRateMeetingSlo(MEASURED);
        double kneeWidth = knee.relativeHalfWidth();
        boolean sloBeyondSweep = slo.found() && Double.isInfinite(slo.highPerS());
        double sloWidth = sloBeyondSweep ? 0 : slo.relativeHalfWidth();
        boolean kneeStable = kneeWidth <= KNEE_TOLERANCE;
        boolean sloStable = sloWidth <= OBJECTIVE_TOLERANCE;
        double next = Double.NaN;
        String why = null;
        DemoRow invalid = firstUnrepeated(r -> !r.measuredValid());
        DemoRow noisy = firstUnrepeated(r -> r.machineDecidesObjective(sloTtftP99Ms));
        if (invalid != null) {
            next = invalid.rate();
            why = "again: the run at this rate was flagged invalid";
        } else if (!sloStable) {
            DemoRow unshown = slo.found() && lowerSideWider(slo) ? unshownBelow(slo) : null;
            if (noisy != null) {
                next = noisy.rate();
                why = "again: " + noisyWords(noisy);
            } else if (unshown != null) {
                next = unshown.rate();
                ObjectiveMisses m = objectiveMisses(unshown);
                why = String.format(Locale.ROOT, "again: its TTFT p99 meets %.0f ms, but %s (%d over it) do not show it "
                                + "at 95%% (the objective's rate now %s)", sloTtftP99Ms,
                        DemoWords.count((int) m.requests(), "request"), m.misses(), slo.words("-"));
            } else {
                next = bisect(slo);
                why = String.format(Locale.ROOT, "bisecting toward where TTFT p99 crosses %.0f ms (now %s)",
                        sloTtftP99Ms, slo.words("below every rate swept"));
            }
        }
        if (Double.isNaN(next) && !kneeStable) {
            DemoRow kneeRow = kneeRow(MEASURED);
            double top = rows.stream().filter(DemoRow::measuredValid).mapToDouble(DemoRow::rate).max()
                    .orElse(Double.NaN);
            next = kneeRow != null ? kneeRow.rate() : 1.25 * top;
            why = kneeRow != null ? "repeating the most overloaded rate, for the knee (now " + knee.words("none") + ")"
                    : "no valid run was overloaded yet: one past the knee";
        }
        boolean stable = kneeStable && sloStable;
        return new Stability(stable, kneeWidth, sloWidth, stable ? Double.NaN : next, why,
                words(stable, knee, slo, kneeWidth, sloWidth, extraRunsSoFar, maxExtraRuns), extraRunsSoFar);
    }

    /** The first run of this kind whose rate was not run again, or null. */
    private DemoRow firstUnrepeated(java.util.function.Predicate<DemoRow> kind) {
        for (DemoRow r : rows) {
            if (kind.test(r) && rows.stream().filter(o -> Math.abs(o.rate() / r.rate() - 1) < SAME_RATE).count() == 1) {
                return r;
            }
        }
        return null;
    }

    /** Whether the objective's interval reaches further below its estimate than above it (or is open below). */
    private static boolean lowerSideWider(RateEstimate slo) {
        return !(slo.lowPerS() > 0) || slo.perS() - slo.lowPerS() >= slo.highPerS() - slo.perS();
    }

    /**
     * The valid measured rate to run again for the lower end of the objective's interval, or null: among the rates
     * between the heaviest whose requests show the objective met and the estimate, those whose TTFT p99 meets it
     * without their requests showing it, the one with the smallest share over it (the heavier of equals). Running it
     * again pools its requests; if it then shows the objective met, the lower end rises to it.
     */
    private DemoRow unshownBelow(RateEstimate slo) {
        List<DemoRow> below = objectiveRows().stream().filter(r -> r.rate() <= slo.perS()).toList();
        double shown = below.stream().filter(this::showsObjectiveMet).mapToDouble(DemoRow::rate).max().orElse(0);
        DemoRow best = null;
        double bestShare = Double.POSITIVE_INFINITY;
        for (DemoRow r : below) {
            ObjectiveMisses m = objectiveMisses(r);
            if (r.rate() <= shown || !(r.measured().ttftP99Ms() <= sloTtftP99Ms) || m.requests() == 0) {
                continue;
            }
            double share = (double) m.misses() / m.requests();
            if (share < bestShare || share == bestShare && r.rate() > best.rate()) {
                best = r;
                bestShare = share;
            }
        }
        return best;
    }

    /**
     * The next rate toward the objective's crossing: the crossing itself (half the lightest rate where no rate meets
     * it); where a measured rate lies within {@value #MIN_GAP} of it, the middle of the wider gap beside that rate.
     */
    private double bisect(RateEstimate slo) {
        double[] measured = rows.stream().filter(DemoRow::measuredValid).mapToDouble(DemoRow::rate)
                .sorted().toArray();
        if (measured.length == 0) {
            return Double.NaN;
        }
        double target = slo.found() ? slo.perS() : measured[0] / 2;
        int nearest = 0;
        for (int i = 1; i < measured.length; i++) {
            nearest = Math.abs(measured[i] - target) < Math.abs(measured[nearest] - target) ? i : nearest;
        }
        double at = measured[nearest];
        if (Math.abs(at - target) >= MIN_GAP * target) {
            return target;
        }
        double below = nearest > 0 ? measured[nearest - 1] : 0.9 * at;
        double above = nearest < measured.length - 1 ? measured[nearest + 1] : 1.1 * at;
        return above - at >= at - below ? (at + above) / 2 : (below + at) / 2;
    }

    private String words(boolean stable, RateEstimate knee, RateEstimate slo, double kneeWidth, double sloWidth,
                         int extra, int maxExtra) {
        String widths = String.format(Locale.ROOT, "knee %s, rate meeting the objective %s; the demo asks for +-%.0f%% "
                + "and +-%.0f%% at 95%%", pct(kneeWidth, knee.found()), pct(sloWidth, slo.found() || slo.bounded()),
                100 * KNEE_TOLERANCE, 100 * OBJECTIVE_TOLERANCE);
        String runs = extra == 0 ? "" : String.format(Locale.ROOT, " after %d extra run%s", extra, extra == 1 ? "" : "s");
        if (stable) {
            return "Conclusions stable" + runs + ": " + widths + ".";
        }
        return "Conclusions NOT stable on this machine" + runs + (maxExtra == 0 ? " (--max-extra-runs 0 adds none)"
                : extra >= maxExtra ? " (the most --max-extra-runs allows)" : "") + ": " + widths
                + ". Longer runs (--run-seconds), more extra runs or a quieter machine narrow them.";
    }

    private static String pct(double width, boolean found) {
        return !found ? "not found" : Double.isInfinite(width) ? "unbounded"
                : String.format(Locale.ROOT, "+-%.1f%%", 100 * width);
    }

    /** The index, in the order rows were run, of the valid row nearest the measured knee (or the predicted one). */
    int rowNearestTheKnee(List<DemoRow> runOrder) {
        RateEstimate knee = measuredKnee();
        double target = knee.found() ? knee.perS() : predictedSaturation;
        int best = -1;
        for (int i = 0; i < runOrder.size(); i++) {
            DemoRow r = runOrder.get(i);
            if (best < 0 || Math.abs(r.rate() - target) < Math.abs(runOrder.get(best).rate() - target)) {
                best = i;
            }
        }
        return best;
    }

    /** The sweep's verdict on its own conclusions. */
    record Stability(boolean stable, double kneeRelativeHalfWidth, double objectiveRelativeHalfWidth,
                     double nextRatePerS, String nextWhy, String words, int extraRuns) {

        DemoResult.Stability toResult() {
            return new DemoResult.Stability(stable, finite(kneeRelativeHalfWidth), finite(objectiveRelativeHalfWidth),
                    KNEE_TOLERANCE, OBJECTIVE_TOLERANCE, extraRuns, words);
        }
    }

    void print(PrintStream out) {
        out.println();
        out.println("Measured = benchmark client against the mock server over HTTP (converted to model time);");
        out.println("simulated = discrete-event simulator, same requests; predicted = " + predictor + ".");
        out.println("Each cell: measured / simulated / predicted, all in model time (ms and per second of the modelled GPU). "
                + "Completed req/s: requests completed per second over the second half of sending, so the offered rate "
                + "below the knee and at most the engine's capacity past it.");
        out.println("Waiting = mean requests queued for the engine (Little's law); past the knee it grows for as long as "
                + "the run lasts, and the prediction says 'unstable' ('-'). Measured p99 95% CI: sectioning over the run's "
                + "requests ('?' where too few requests lie beyond the p99 to bound it).");
        out.printf(Locale.ROOT, "%-14s %-22s %-24s %-18s %-22s %-22s %-18s %s%n", "rate req/s", "TTFT p50 ms", "TTFT p99 ms",
                "measured p99 CI", "TPOT p50 ms", "completed req/s", "waiting", "client vs server p99 ms");
        for (DemoRow r : rows) {
            DemoSpan ci = r.measured().ttftP99();
            out.printf(Locale.ROOT, "%-14s %-22s %-24s %-18s %-22s %-22s %-18s %.2f%s%s%n",
                    String.format(Locale.ROOT, "%.2f (%.0f%%)", r.rate(), 100 * r.fraction()),
                    triple(r.measured().ttftP50Ms(), r.simulated().ttftP50Ms(), r.predicted().ttftP50Ms(), 1),
                    triple(r.measured().ttftP99Ms(), r.simulated().ttftP99Ms(), r.predicted().ttftP99Ms(), 1),
                    Double.isNaN(ci.low()) ? "-" : String.format(Locale.ROOT, "%.1f-%s", ci.low(),
                            Double.isFinite(ci.high()) ? String.format(Locale.ROOT, "%.1f", ci.high()) : "?"),
                    triple(r.measured().tpotP50Ms(), r.simulated().tpotP50Ms(), r.predicted().tpotP50Ms(), 2),
                    triple(r.measured().completedPerS(), r.simulated().completedPerS(),
                            r.predicted().completedPerS(), 1),
                    triple(r.measured().meanWaiting(), r.simulated().meanWaiting(), r.predicted().meanWaiting(), 1),
                    r.groundTruthP99Ms(), r.why() == null ? "" : " (added: " + r.why() + ")",
                    invalidWords(r) + (r.machineDecidesObjective(sloTtftP99Ms)
                            ? " (" + noisyWords(r) + ": left out of the objective's rate)" : ""));
        }
        out.printf(Locale.ROOT, "knee (capacity), req/s: measured %s / simulated %s / predicted %.2f; a long simulation "
                        + "(%,d requests at twice the predicted rate) serves %.2f%n",
                measuredKnee().words("not reached in the sweep"), simulatedKnee().words("not reached in the sweep"),
                predictedSaturation, DemoRow.STEADY_RUN_REQUESTS, simulatedSaturation);
        out.println("  (a sweep's knee is the rate its most overloaded run served over the second half of sending: output "
                + "tokens per second over the mean output tokens per request; overloaded = served under 90% of the rate "
                + "sent; the prediction's knee is its closed form's saturation rate)");
        out.printf(Locale.ROOT, "highest rate with TTFT p99 <= %.0f ms: measured %s / simulated %s / predicted %s%n",
                sloTtftP99Ms, highestRateMeetingSlo(MEASURED).words("none of the rates swept"),
                highestRateMeetingSlo(SIMULATED).words("none of the rates swept"),
                highestRateMeetingSlo(PREDICTED).words("none"));
        out.println("  (where the TTFT p99 curve crosses the objective, interpolated between rates; the interval from the "
                + "curves through each rate's 95% interval)");
        if (stability != null) {
            out.println(stability.words());
        }

        out.println();
        List<String> notes = notes();
        out.println(notes.isEmpty() ? "All three agree within 10% at every rate below saturation." : "Where they disagree, and why:");
        notes.forEach(n -> out.println("  - " + n));
    }

    /** Why this machine's noise decides the objective at a row: its client's and server's TTFT p99, or its error. */
    private String noisyWords(DemoRow r) {
        if (r.serverMeetsWhereClientMisses(sloTtftP99Ms)) {
            return String.format(Locale.ROOT, "its TTFT p99 as the client measured it (%s ms) and as the server served it "
                            + "(%s ms) lie either side of %s ms, so this machine's noise, not the engine, decides it",
                    DemoWords.ms(r.measured().ttftP99Ms()), DemoWords.ms(r.serverTruth().ttftP99Ms()),
                    DemoWords.ms(sloTtftP99Ms));
        }
        return String.format(Locale.ROOT, "its TTFT p99 (%s ms) misses %s ms, but the client's own error against the "
                        + "server's truth (p99 %s ms) is %s of it, so this machine's noise, not the engine, decides it",
                DemoWords.ms(r.measured().ttftP99Ms()), DemoWords.ms(sloTtftP99Ms), DemoWords.ms(r.groundTruthP99Ms()),
                DemoWords.percent(Math.round(100 * r.groundTruthP99Ms() / r.measured().ttftP99Ms()) / 100.0));
    }

    /**
     * Why a measured run was left out of the latency conclusions, and whether it still counts past the knee: the
     * server's own account of it, in model time, says whether its queue grew.
     */
    private static String invalidWords(DemoRow r) {
        if (r.measuredValid()) {
            return "";
        }
        String why = " (run flagged invalid for the client, its latencies left out of the conclusions: "
                + String.join("; ", r.invalidReasons());
        DemoSide t = r.serverTruth();
        if (t == null || Double.isNaN(t.lateServiceRatePerS())) {
            return why + ")";
        }
        return why + String.format(Locale.ROOT, "; the server's own truth: requests arrived at %.2f req/s and were served "
                        + "at %.2f late in the run, so the queue %s)", t.sendRatePerS(), t.lateServiceRatePerS(),
                t.overloaded() ? "grew and the run counts past the knee" : "did not grow");
    }

    /** Where the three methods disagree by more than 10%, each with its reason. */
    private List<String> notes() {
        return new DemoNotes(rows, predictedSaturation, simulatedKnee(), timeScale, fixedTiming).notes();
    }

    /** Measured, simulated and predicted rates; null where a method found none. */
    private static DemoResult.ByMethod<Double> byMethod(RateEstimate measured, RateEstimate simulated,
                                                        RateEstimate predicted) {
        return new DemoResult.ByMethod<>(measured.found() ? measured.perS() : null,
                simulated.found() ? simulated.perS() : null, predicted.found() ? predicted.perS() : null);
    }

    private static DemoResult.ByMethod<List<Double>> intervalsByMethod(RateEstimate measured, RateEstimate simulated,
                                                                      RateEstimate predicted) {
        return new DemoResult.ByMethod<>(measured.intervalJson(), simulated.intervalJson(), predicted.intervalJson());
    }

    private static String triple(double a, double b, double c, int decimals) {
        String f = "%." + decimals + "f";
        return fmt(f, a) + " / " + fmt(f, b) + " / " + fmt(f, c);
    }

    private static String fmt(String f, double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, f, v);
    }

    private static Double finite(double v) {
        return Double.isFinite(v) ? v : null;
    }

    /** The comparison as {@code --save-result} writes it. */
    DemoResult result() {
        RateEstimate mk = measuredKnee();
        RateEstimate sk = simulatedKnee();
        RateEstimate pk = predictedKnee();
        RateEstimate ms = highestRateMeetingSlo(MEASURED);
        RateEstimate ss = highestRateMeetingSlo(SIMULATED);
        RateEstimate ps = highestRateMeetingSlo(PREDICTED);
        List<DemoResult.Row> list = rows.stream().map(r -> new DemoResult.Row(r.rate(), r.fraction(), r.why(),
                DemoResult.Side.of(r.measured()), DemoResult.Side.of(r.simulated()), DemoResult.Side.of(r.predicted()),
                DemoResult.Side.of(r.steadySimulated()), r.groundTruthP99Ms(), r.measuredValid(), r.invalidReasons()))
                .toList();
        List<DemoResult.SimulatedPoint> simulated = simulatedCurve == null ? List.of() : simulatedCurve.points().stream()
                .map(p -> new DemoResult.SimulatedPoint(p.rate(), p.replications().size(), DemoResult.Side.of(p.mean())))
                .toList();
        List<DemoResult.PredictedPoint> predicted = predictedCurve.stream()
                .map(p -> new DemoResult.PredictedPoint(p.rate(), DemoResult.Side.of(p.side()))).toList();
        return new DemoResult(timeScale, predictor, predictedSaturation, finite(simulatedSaturation),
                byMethod(mk, sk, pk), intervalsByMethod(mk, sk, pk), sloTtftP99Ms, byMethod(ms, ss, ps),
                intervalsByMethod(ms, ss, ps), stability == null ? null : stability.toResult(), extraRuns,
                PercentileInterval.METHOD, list, simulated, predicted, notes(), null, null);
    }
}
