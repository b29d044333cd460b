package dev.infersim.demo;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The demo's table, conclusions and plain-words notes, from fixed numbers. */
class DemoReportTest {
    private static final String CHAIN = "continuous-batching queueing chain";

    private static DemoReport report(List<DemoRow> rows, double predictedKnee) {
        return new DemoReport(rows, predictedKnee, predictedKnee, 2, 150, CHAIN, false, null, List.of(), null, 0);
    }

    /** One row in which only TPOT differs: simulated in the short run, in the long run, and predicted. */
    private static String printed(double shortRunTpot, double steadyTpot, double predictedTpot) {
        DemoSide simulated = new DemoSide(30, 70, shortRunTpot, 40, 40, 1, 40, 40, false);
        DemoSide steady = new DemoSide(30, 70, steadyTpot, 40, 40, 1, 40, 40, false);
        DemoSide predicted = new DemoSide(30, 70, predictedTpot, 40, 40, 1, 40, 40, false);
        DemoRow row = new DemoRow(43.76, 0.9, simulated, simulated, predicted, steady, 8, true, List.of(), null);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        report(List.of(row), 48.6).print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aGapTheLongSimulationClosesIsBlamedOnTheRunsLength() {
        String out = printed(15.3, 25.3, 25.7);
        assertTrue(out.contains("TPOT p50 predicted is +68% vs simulated but +2% vs 20,000 simulated requests"), out);
        assertTrue(out.contains("does not reach"), out);
    }

    @Test
    void aGapTheLongSimulationKeepsIsBlamedOnTheModel() {
        String out = printed(15.3, 15.5, 25.7);
        assertTrue(out.contains("TPOT p50 predicted is +68% vs simulated and +66% vs 20,000 simulated requests"), out);
        assertTrue(out.contains("the mean iteration of the batch it finds on arrival"), out);
    }

    /**
     * A side at one rate: TTFT p99 with an interval of +-10%, requests finished per second late in the run (four
     * windows spread +-1 around it), the rate sent; overloaded below 90%.
     */
    private static DemoSide side(double ttftP99, double taken, double sent) {
        return side(ttftP99, 0.1, taken, sent);
    }

    private static DemoSide side(double ttftP99, double spread, double taken, double sent) {
        return new DemoSide(ttftP99 / 2, ttftP99, 10, taken, taken, 1, sent, taken, false,
                DemoSpan.NONE, new DemoSpan((1 - spread) * ttftP99, (1 + spread) * ttftP99),
                DemoSpan.NONE, new double[] {taken - 1, taken + 1, taken - 1, taken + 1});
    }

    private static DemoRow row(double rate, DemoSide measured, DemoSide predicted) {
        return new DemoRow(rate, rate / 50, measured, measured, predicted, measured, 1, true, List.of(), null);
    }

    private static DemoRow invalid(double rate, DemoSide measured) {
        return new DemoRow(rate, rate / 50, measured, measured, measured, measured, 1, false,
                List.of("p99 send lag 6 ms > 1 ms"), null);
    }

    private static final DemoSide UNSTABLE =
            new DemoSide(Double.NaN, Double.NaN, Double.NaN, 50, 50, Double.NaN, 65, 50, true);

    @Test
    void theKneeIsTheMostOverloadedRunsLateServiceRateWithTheirBatchMeansInterval() {
        DemoReport report = report(List.of(
                row(25, side(60, 25, 25), side(55, 25, 25)),
                row(45, side(120, 44, 45), side(110, 45, 45)),
                row(55, side(500, 47, 55), UNSTABLE),
                row(65, side(900, 48, 65), UNSTABLE)), 50);
        RateEstimate knee = report.measuredKnee();
        assertEquals(48, knee.perS(), 1e-9, "the most overloaded run, not the highest of the noisy ones");
        // four windows 47, 49, 47, 49: mean 48, s = 1.155, t(0.975, 3) = 3.182
        assertEquals(48 - 3.182 * 1.155 / 2, knee.lowPerS(), 0.01);
        assertEquals(48 + 3.182 * 1.155 / 2, knee.highPerS(), 0.01);
        assertEquals(50, report.predictedKnee().perS(), 1e-9);
    }

    /**
     * A client short of CPU made the measured run at 25 req/s look overloaded (it served 20) and the one at 65 invalid;
     * the simulation kept up at 25, so its knee is its own overload at 65 req/s, not "none".
     */
    @Test
    void aMeasuredOverloadTheSimulationDidNotSeeLeavesTheSimulatedKneeToTheSimulation() {
        List<DemoRow> rows = List.of(row(25, side(400, 20, 25), side(55, 25, 25)),
                invalid(65, side(900, 48, 65)));
        ReplicatedSweep simulated = ReplicatedSweep.run(new double[] {25, 65}, 2,
                (rate, k) -> rate < 50 ? side(55, 25, 25) : side(900, 48, 65));
        DemoReport report = new DemoReport(rows, 50, 50, 2, 150, CHAIN, false, simulated, List.of(), null, 0);
        assertEquals(20, report.measuredKnee().perS(), 1e-9, "the measured run that looked overloaded");
        assertEquals(48, report.simulatedKnee().perS(), 1e-9, "the simulation's own overload");
    }

    @Test
    void theHighestRateMeetingTheObjectiveIsWhereTheP99CurveCrossesIt() {
        DemoReport report = report(List.of(
                row(25, side(60, 25, 25), side(55, 25, 25)),
                row(45, side(120, 44, 45), side(110, 45, 45)),
                row(65, side(900, 48, 65), UNSTABLE)), 50);
        RateEstimate slo = report.highestRateMeetingSlo(DemoReport.MEASURED);
        // log-linear between (45, 120) and (65, 900): 45 + 20 ln(150/120) / ln(900/120)
        assertEquals(45 + 20 * Math.log(150 / 120.0) / Math.log(900 / 120.0), slo.perS(), 1e-9);
        assertTrue(slo.lowPerS() < slo.perS() && slo.highPerS() > slo.perS(), slo.toString());
        assertEquals(45 + 20 * Math.log(150 / 132.0) / Math.log(990 / 132.0), slo.lowPerS(), 1e-9, "upper curve");
    }

    /**
     * The 11.30 vs 33.91 req/s: a run flagged invalid (a busy moment's send lag) ended the search at the rate
     * before it, whatever its latency. It is now left out: the crossing rests on the valid runs around it.
     */
    @Test
    void aRunFlaggedInvalidIsLeftOutInsteadOfEndingTheSearch() {
        DemoReport report = report(List.of(
                row(11, side(49, 11, 11), side(45, 11, 11)),
                invalid(23, side(69, 23, 23)),
                row(34, side(102, 34, 34), side(103, 34, 34)),
                row(41, side(146, 40, 41), side(149, 41, 41)),
                row(50, side(637, 45, 50), UNSTABLE)), 45);
        RateEstimate slo = report.highestRateMeetingSlo(DemoReport.MEASURED);
        assertTrue(slo.perS() > 41 && slo.perS() < 42, slo.toString());
        DemoReport.Stability s = report.stability(0, 2);
        assertEquals(23, s.nextRatePerS(), 1e-9, "the invalid run is repeated first");
        assertTrue(s.nextWhy().contains("flagged invalid"), s.nextWhy());
    }

    @Test
    void anUnstableCrossingBisectsTowardItAndAStableSweepAddsNothing() {
        DemoReport wide = report(List.of(
                row(25, side(60, 25, 25), side(55, 25, 25)),
                row(35, side(100, 0.4, 35, 35), side(110, 35, 35)),
                row(55, side(300, 0.4, 47, 55), UNSTABLE)), 50);
        DemoReport.Stability s = wide.stability(0, 2);
        assertFalse(s.stable(), s.words());
        RateEstimate slo = wide.highestRateMeetingSlo(DemoReport.MEASURED);
        assertEquals(slo.perS(), s.nextRatePerS(), 1e-9, "the next rate is the crossing itself");
        assertTrue(s.nextRatePerS() > 35 && s.nextRatePerS() < 55, s.toString());
        assertTrue(s.words().startsWith("Conclusions NOT stable"), s.words());

        DemoSide tight = new DemoSide(30, 140, 10, 48, 48, 1, 60, 48, false, DemoSpan.NONE,
                new DemoSpan(139, 141), DemoSpan.NONE, new double[] {47.9, 48.1, 47.9, 48.1});
        DemoReport narrow = report(List.of(
                row(40, side(100, 40, 40), side(100, 40, 40)),
                row(42, new DemoSide(30, 140, 10, 42, 42, 1, 42, 42, false, DemoSpan.NONE,
                        new DemoSpan(139, 141), DemoSpan.NONE, new double[0]), side(140, 42, 42)),
                row(44, new DemoSide(30, 160, 10, 44, 44, 1, 44, 44, false, DemoSpan.NONE,
                        new DemoSpan(159, 161), DemoSpan.NONE, new double[0]), side(160, 44, 44)),
                row(60, tight, UNSTABLE)), 50);
        DemoReport.Stability done = narrow.stability(1, 2);
        assertTrue(done.stable(), done.words());
        assertTrue(Double.isNaN(done.nextRatePerS()));
        assertTrue(done.words().startsWith("Conclusions stable after 1 extra run"), done.words());
    }

    /**
     * A light run's p99 above the objective (a few slow requests on a busy machine) that a heavier run's upper bound
     * rules out does not end the curve there: the estimate lies inside its interval (a planted 170 ms at 16 req/s,
     * bounded by 114 ms at 32).
     */
    @Test
    void aNoisyLightRunIsHeldWithinItsNeighboursBoundsSoTheEstimateLiesInItsInterval() {
        DemoReport report = report(List.of(
                row(16, side(170, 0.6, 16, 16), side(40, 16, 16)),
                row(32, side(95, 0.2, 32, 32), side(70, 32, 32)),
                row(45, side(190, 0.2, 45, 45), side(110, 45, 45))), 50);
        RateEstimate slo = report.highestRateMeetingSlo(DemoReport.MEASURED);
        // interpolated on the log of the latency, as the p99 axis is drawn
        assertEquals(32 + 13 * Math.log(150 / 95.0) / Math.log(190 / 95.0), slo.perS(), 1e-6, slo.toString());
        assertTrue(slo.lowPerS() <= slo.perS() && slo.perS() <= slo.highPerS(), slo.toString());
    }

    @Test
    void aSweepThatNeverOverloadsHasNoKneeAndAsksForARatePastIt() {
        DemoReport report = report(List.of(row(25, side(60, 25, 25), side(55, 25, 25))), 50);
        assertFalse(report.measuredKnee().found());
        assertFalse(report.simulatedKnee().found());
    }

    @Test
    void withinTenPercentThereIsNoNote() {
        assertFalse(printed(24.0, 25.3, 25.7).contains("TPOT p50 predicted is"));
    }

    /** Printed report of two rates past the knee (at 55 and 65 req/s) served at these rates. */
    private static String pastTheKnee(double servedAt55, double servedAt65) {
        DemoReport report = report(List.of(
                row(45, side(120, 44, 45), side(110, 45, 45)),
                row(55, side(500, servedAt55, 55), UNSTABLE),
                row(65, side(900, servedAt65, 65), UNSTABLE)), 50);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** The words past the knee say what the numbers did: rise, fall or stay, each with the reason that fits. */
    @Test
    void pastTheKneeTheNotesSayWhatThroughputDidFromItsNumbers() {
        String rises = pastTheKnee(46, 48);
        assertTrue(rises.contains("simulated rises from 46.00 to 48.00 req/s completed (55.00 to 65.00 req/s offered); "
                + "measured rises from 46.00 to 48.00"), rises);
        assertTrue(rises.contains("one step of a fuller batch serves more"), rises);
        String stays = pastTheKnee(48, 48.2);
        assertTrue(stays.contains("simulated stays within 1% from 48.00 to 48.20 req/s completed"), stays);
        assertTrue(stays.contains("a longer queue completes no more"), stays);
        assertFalse(stays.contains("creeps up") || stays.contains("fuller batch serves more"), stays);
        String within = pastTheKnee(48, 47.5); // windows of +-1 around each: the intervals overlap
        assertTrue(within.contains("simulated falls from 48.00 to 47.50 req/s completed"), within);
        assertTrue(within.contains("within what runs of this length tell apart"), within);
        String falls = pastTheKnee(48, 44);
        assertTrue(falls.contains("simulated falls from 48.00 to 44.00 req/s completed"), falls);
        assertTrue(falls.contains("more than the two runs' 95% intervals allow"), falls);
    }

    /**
     * A measured rate as a busy machine showed it: TTFT p99 with its interval (high +Infinity where the run cannot bound
     * it), the rate served late in the run (overloaded below 90% of the rate), and each request's TTFT: {@code n}
     * requests, {@code over} of them over 150 ms, spread or together ({@link ObjectiveMissesTest#ttfts}); no TTFTs kept
     * where {@code n} is 0.
     */
    private static DemoRow busy(double rate, double p99, double low, double high, double served, int n, int over,
                                boolean together) {
        return busy(rate, p99, low, high, served, n, over, together, Double.NaN);
    }

    /** The same with the server's own TTFT p99 of the run's requests ({@code serverP99}, NaN where not kept). */
    private static DemoRow busy(double rate, double p99, double low, double high, double served, int n, int over,
                                boolean together, double serverP99) {
        return busy(rate, p99, low, high, served, n, over, together, serverP99, 1);
    }

    /** The same with the client's own TTFT error against the server's truth, p99 ({@code clientError}). */
    private static DemoRow busy(double rate, double p99, double low, double high, double served, int n, int over,
                                boolean together, double serverP99, double clientError) {
        DemoSide s = new DemoSide(p99 / 2, p99, 10, served, served, 1, rate, served, false, DemoSpan.NONE,
                new DemoSpan(low, high), DemoSpan.NONE, new double[] {served - 1, served + 1, served - 1, served + 1});
        DemoSide server = new DemoSide(Double.NaN, serverP99, Double.NaN, served, Double.NaN, Double.NaN, rate, served,
                false);
        return new DemoRow(rate, rate / 53.73, s, s, s, s, clientError, true, List.of(), null, server,
                n == 0 ? new double[0] : ObjectiveMissesTest.ttfts(n, over, together));
    }

    private static final double OPEN = Double.POSITIVE_INFINITY;

    /**
     * The rows of the third run on a busy machine (2026-11-29, load 18): every rate below the crossing had a p99
     * interval open above (its few slowest requests came together), so the upper curve first fell under 150 ms nowhere
     * and the objective's rate read "51.61 (95% CI ?-54.54)", NOT stable. {@code at85} and {@code at60}: the requests
     * (and misses) of the runs at 45.67 and 32.24 req/s.
     */
    private static List<DemoRow> thirdBusyRun(int n85, int over85, boolean together85, int n60) {
        return List.of(
                busy(16.12, 50.2, 39.7, OPEN, 16.12, n60 == 0 ? 0 : 258, 0, false),
                busy(32.24, 65.7, 58.2, OPEN, 32.24, n60, 0, false),
                busy(45.67, 103.2, 91.3, OPEN, 45.67, n85, over85, together85),
                busy(51.04, 139.8, 125.8, OPEN, 47.4, n60 == 0 ? 0 : 816, 7, true),
                busy(52.09, 159.5, 146.8, 194.3, 47.8, n60 == 0 ? 0 : 833, 12, true),
                busy(54.26, 158.0, 136.1, OPEN, 41.4, n60 == 0 ? 0 : 868, 11, true),
                busy(56.42, 200.6, 172.9, 257.9, 46.9, n60 == 0 ? 0 : 903, 30, true),
                busy(85.97, 7489, 7422, 7509, 54.1, n60 == 0 ? 0 : 1375, 1200, true));
    }

    @Test
    void withoutTheRequestsTheBusyRunsIntervalIsOpenBelowAsTheDemoSaid() {
        DemoReport report = report(thirdBusyRun(0, 0, false, 0), 53.73);
        RateEstimate slo = report.highestRateMeetingSlo(DemoReport.MEASURED);
        assertEquals(51.60, slo.perS(), 0.01);
        assertEquals(0, slo.lowPerS(), "open below");
        assertEquals(54.54, slo.highPerS(), 0.01);
        assertFalse(report.stability(2, 2).stable());
    }

    /** Hundreds of requests under 150 ms at 32 and 46 req/s show the objective met there: the interval is bracketed. */
    @Test
    void requestsThatShowTheObjectiveMetBracketTheCrossingAndTheSweepIsStable() {
        DemoReport report = report(thirdBusyRun(730, 1, false, 516), 53.73);
        RateEstimate slo = report.highestRateMeetingSlo(DemoReport.MEASURED);
        assertEquals(51.60, slo.perS(), 0.01, "the estimate is the p99 curve's, unchanged");
        assertEquals(45.67, slo.lowPerS(), 1e-9, "the heaviest rate whose requests show it met");
        assertEquals(54.54, slo.highPerS(), 0.01);
        DemoReport.Stability s = report.stability(2, 2);
        assertTrue(s.stable(), s.words());
        assertTrue(s.words().contains("rate meeting the objective +-8.6%"), s.words());
    }

    /**
     * Six requests over 150 ms at 46 req/s (0.8%, a busy moment) do not show the objective met there: the lower end
     * falls back to 32 req/s, the verdict is NOT stable, and the next run repeats 46 req/s, not one near the crossing.
     */
    @Test
    void missesThatDoNotShowTheObjectiveMetLeaveItNotStableAndRepeatTheRateThatWouldBracketIt() {
        DemoReport report = report(thirdBusyRun(730, 6, true, 516), 53.73);
        RateEstimate slo = report.highestRateMeetingSlo(DemoReport.MEASURED);
        assertEquals(32.24, slo.lowPerS(), 1e-9);
        DemoReport.Stability s = report.stability(0, 2);
        assertFalse(s.stable(), s.words());
        assertTrue(s.words().startsWith("Conclusions NOT stable"), s.words());
        assertEquals(45.67, s.nextRatePerS(), 1e-9);
        assertTrue(s.nextWhy().startsWith("again: its TTFT p99 meets 150 ms, but 730 requests (6 over it) do not show "
                + "it at 95%"), s.nextWhy());
    }

    /** A run too short to show the objective met alone shows it once run again: repeats pool their requests. */
    @Test
    void aRepeatPoolsItsRequestsWithTheFirstRun() {
        List<DemoRow> once = thirdBusyRun(300, 0, false, 516);
        DemoReport.Stability first = report(once, 53.73).stability(0, 2);
        assertFalse(first.stable(), first.words());
        assertEquals(45.67, first.nextRatePerS(), 1e-9);
        DemoReport twice = report(concat(once, busy(45.67, 101.0, 90.2, OPEN, 45.67, 300, 0, false)), 53.73);
        assertEquals(45.67, twice.highestRateMeetingSlo(DemoReport.MEASURED).lowPerS(), 1e-9);
        DemoReport.Stability second = twice.stability(1, 2);
        assertTrue(second.stable(), second.words());
    }

    /**
     * The first run of 2026-11-29 13:34 beside a build (load 11-13): at 51.04 req/s the client measured a TTFT p99 of
     * 242 ms (its own error 79.5 ms of model time), which put the objective's rate at 47.32, 12.5% under the simulated
     * 54.09. {@code serverP99} is the server's own p99 of that run's requests.
     */
    private static List<DemoRow> firstBusyRun(double serverP99) {
        return List.of(
                busy(16.12, 49.4, 42.2, OPEN, 16.12, 258, 0, false),
                busy(32.24, 66.4, 60.6, 81.4, 32.24, 516, 0, false),
                busy(45.67, 121.2, 103.4, OPEN, 44.9, 730, 1, false),
                busy(51.04, 242.2, 162.3, OPEN, 47.3, 816, 25, true, serverP99),
                busy(56.42, 162.0, 137.9, OPEN, 46.4, 903, 14, true),
                busy(85.97, 7449, 7348, OPEN, 53.9, 1375, 1300, true));
    }

    /** Where the server's own p99 also misses the objective, the client's is kept: the engine missed it. */
    @Test
    void aTailTheServerAlsoShowsIsTheEnginesAndIsKept() {
        DemoReport report = report(firstBusyRun(230), 53.73);
        assertEquals(45.67 + 5.37 * Math.log(150 / 121.2) / Math.log(242.2 / 121.2),
                report.highestRateMeetingSlo(DemoReport.MEASURED).perS(), 1e-9);
        assertFalse(printedReport(report).contains("decides it"));
    }

    /**
     * Where the server served the same requests with a p99 of 140 ms, outside the client's interval (162-?), the
     * client's 242 ms is this machine's noise: the run is left out of the objective's rate, which then rests on its
     * neighbours (too wide to be stable), and run again; a clean repeat brackets it.
     */
    @Test
    void aTailOnlyTheClientShowsIsLeftOutOfTheObjectiveAndRunAgain() {
        List<DemoRow> rows = firstBusyRun(140);
        DemoReport report = report(rows, 53.73);
        RateEstimate slo = report.highestRateMeetingSlo(DemoReport.MEASURED);
        assertEquals(45.67 + 10.75 * Math.log(150 / 121.2) / Math.log(162.0 / 121.2), slo.perS(), 1e-9);
        assertEquals(45.67, slo.lowPerS(), 1e-9);
        DemoReport.Stability s = report.stability(0, 2);
        assertFalse(s.stable(), s.words());
        assertEquals(51.04, s.nextRatePerS(), 1e-9);
        assertTrue(s.nextWhy().startsWith("again: its TTFT p99 as the client measured it (242 ms) and as the server "
                + "served it (140 ms) lie either side of 150 ms"), s.nextWhy());
        String out = printedReport(report);
        assertTrue(out.contains("so this machine's noise, not the engine, decides it: left out of the objective's "
                + "rate)"), out);
        assertEquals(53.73, report.measuredKnee().perS(), 1.0, "the knee is not the tail's: the run still counts");

        DemoReport repeated = report(concat(rows, busy(51.04, 141, 125, OPEN, 47.4, 816, 2, false, 139)), 53.73);
        RateEstimate again = repeated.highestRateMeetingSlo(DemoReport.MEASURED);
        assertEquals(51.04, again.lowPerS(), 1e-9, "the repeat's requests show the objective met");
        DemoReport.Stability after = repeated.stability(1, 2);
        assertTrue(after.stable(), after.words());
    }

    /**
     * The second run of 2026-11-29 14:19 beside a build (load 13-16): at 32.24 and 51.04 req/s the client's p99 missed
     * 150 ms with its own error (85 and 216 ms of model time) about half of it, and the mock's truth, served by the same
     * machine, missed it too; the objective's rate came out 46.81 (45.95-47.17), "stable" and 13.5% under the simulated
     * 54.09. Those tails are the machine's: left out, the rate rests on the runs whose error is a small share of their
     * tail, the miss at 56.42 req/s (error 16% of its p99) kept.
     */
    @Test
    void aMissWhoseTailIsLargelyTheClientsOwnErrorIsLeftOutOfTheObjective() {
        DemoReport report = report(List.of(
                busy(16.12, 111.9, 48.1, OPEN, 16.12, 258, 1, false, Double.NaN, 88.39),
                busy(32.24, 171.3, 83.4, 222.7, 32.24, 516, 8, true, Double.NaN, 85.09),
                busy(45.67, 190.4, 140.5, OPEN, 45.3, 730, 12, true, 123, 87.35),
                busy(45.67, 111.0, 101.9, 121.5, 43.3, 730, 0, false, 108, 22.07),
                busy(51.04, 460.5, 409.2, OPEN, 46.6, 816, 60, true, 200, 216.43),
                busy(56.42, 200.7, 180.7, OPEN, 47.2, 903, 30, true, 190, 33.00),
                busy(85.97, 7496.1, 7402.1, 7522.9, 54.2, 1375, 1300, true, 7400, 70.83)), 53.73);
        RateEstimate slo = report.highestRateMeetingSlo(DemoReport.MEASURED);
        assertEquals(45.67 + 10.75 * Math.log(150 / 111.0) / Math.log(200.7 / 111.0), slo.perS(), 1e-9, slo.toString());
        // the upper curve: the repeat's 121.5 ms, then 56.42's bound from the heaviest rate's 7,523 ms
        assertEquals(45.67 + 10.75 * Math.log(150 / 121.5) / Math.log(7522.9 / 121.5), slo.lowPerS(), 1e-9);
        assertEquals(45.67 + 10.75 * Math.log(150 / 101.9) / Math.log(180.7 / 101.9), slo.highPerS(), 1e-9);
        DemoReport.Stability s = report.stability(1, 2);
        assertTrue(s.stable(), s.words());
        String out = printedReport(report);
        assertTrue(out.contains("(its TTFT p99 (461 ms) misses 150 ms, but the client's own error against the server's "
                + "truth (p99 216 ms) is 47% of it, so this machine's noise, not the engine, decides it: left out of the "
                + "objective's rate)"), out);
        assertFalse(out.contains("(its TTFT p99 (201 ms) misses"), "the miss at 56.42 is the engine's: " + out);
        assertFalse(out.contains("(its TTFT p99 (112 ms)"), "a tail that meets the objective is not in doubt: " + out);
    }

    private static String printedReport(DemoReport report) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** A server's truth that shows the queue growing puts a run the client flagged invalid past the knee. */
    @Test
    void aRunFlaggedInvalidCountsPastTheKneeWhenTheServersTruthShowsTheQueueGrowing() {
        DemoSide late = side(9000, 10, 65); // the client's own numbers: served 10 of 65, a client far behind
        DemoSide growing = side(Double.NaN, 48, 65); // the server: 65 arrived per second, 48 served
        DemoSide keepingUp = side(Double.NaN, 64, 65);
        List<DemoRow> below = List.of(row(25, side(60, 25, 25), side(55, 25, 25)), row(45, side(120, 44, 45), side(110, 45, 45)));
        DemoReport past = report(concat(below, new DemoRow(65, 1.3, late, late, UNSTABLE, late, 1, false,
                List.of("a planted reason"), null, growing)), 50);
        assertEquals(48, past.measuredKnee().perS(), 1e-9, "the knee from the server's own windows");
        DemoReport notPast = report(concat(below, new DemoRow(65, 1.3, late, late, UNSTABLE, late, 1, false,
                List.of("a planted reason"), null, keepingUp)), 50);
        assertFalse(notPast.measuredKnee().found(), "the engine kept up: the client's lateness is no knee");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        past.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("the server's own truth: requests arrived at 65.00 req/s and were served at 48.00 late in "
                + "the run, so the queue grew and the run counts past the knee"), out);
    }

    /** Past the knee TTFT p99 rises with the rate; a measured one that falls is named with the client's error. */
    @Test
    void aMeasuredTailThatFallsPastTheKneeIsNamed() {
        DemoReport report = report(List.of(
                row(45, side(120, 44, 45), side(110, 45, 45)),
                row(55, side(900, 47, 55), UNSTABLE),
                row(65, side(700, 48, 65), UNSTABLE)), 50);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("measured TTFT p99 falls from 900 ms at 55.00 req/s to 700 ms at 65.00 req/s"), out);
        assertFalse(pastTheKnee(46, 48).contains("measured TTFT p99 falls"), "a rising tail is no note");
    }

    private static List<DemoRow> concat(List<DemoRow> rows, DemoRow more) {
        List<DemoRow> all = new java.util.ArrayList<>(rows);
        all.add(more);
        return all;
    }

    @Test
    void aClientErrorThatIsAMaterialShareOfTheTailIsNamed() {
        DemoSide measured = new DemoSide(60, 400, 20, 40, 40, 0.6, 40, 40, false);
        DemoSide simulated = new DemoSide(30, 140, 20, 40, 40, 0.6, 40, 40, false);
        DemoRow row = new DemoRow(40, 0.9, measured, simulated, simulated, simulated, 250, true, List.of(), null);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        report(List.of(row), 45).print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("at 40.00 req/s the client's own error against the server's truth (p99 250.0 ms in model "
                + "time) is 63% of the measured TTFT p99"), out);
    }

    @Test
    void predictedWaitingBelowTheEnginesIsExplained() {
        DemoSide simulated = new DemoSide(30, 70, 20, 40, 40, 0.6, 40, 40, false);
        DemoSide predicted = new DemoSide(30, 70, 20, 40, 40, 0.0, 40, 40, false);
        DemoRow row = new DemoRow(40, 0.9, simulated, simulated, predicted, simulated, 8, true, List.of(), null);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        report(List.of(row), 45).print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("requests waiting: predicted 0.0 vs simulated 0.6: the chain counts only requests waiting "
                + "for a batch slot"), out);
    }
}
