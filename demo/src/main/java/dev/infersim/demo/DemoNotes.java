package dev.infersim.demo;

import dev.infersim.result.MeanInterval;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The demo's "where they disagree, and why": each gap of more than {@value #CLOSE} between two methods at a rate below
 * the knee, with the reason in plain words (the measurement's overheads, the closed form's approximations, a short
 * run that has not reached the steady state the closed form describes), and what past the knee means.
 */
final class DemoNotes {
    private static final double CLOSE = 0.10;

    private final List<DemoRow> rows;
    private final double predictedSaturation;
    private final RateEstimate simulatedKnee;
    private final double timeScale;
    private final boolean fixedTiming;

    DemoNotes(List<DemoRow> rows, double predictedSaturation, RateEstimate simulatedKnee, double timeScale,
              boolean fixedTiming) {
        this.rows = rows;
        this.predictedSaturation = predictedSaturation;
        this.simulatedKnee = simulatedKnee;
        this.timeScale = timeScale;
        this.fixedTiming = fixedTiming;
    }

    List<String> notes() {
        List<String> notes = new ArrayList<>();
        if (simulatedKnee.found() && !simulatedKnee.contains(predictedSaturation)) {
            compare(notes, "", "knee", predictedSaturation, simulatedKnee.perS(), "predicted", "simulated", fixedTiming
                    ? "the queue's capacity is the slots over the mean service time of the configured output lengths, while "
                            + "a run draws its own output lengths and ends while long requests still hold slots"
                    : "the chain prices each batch size with the engine's cost model and the prompts admitted per "
                            + "iteration, while near the knee the engine's batch and its prefills swing around those means");
        }
        boolean pastKnee = false;
        boolean waitingExplained = false;
        for (DemoRow r : rows) {
            String at = String.format(Locale.ROOT, "at %.2f req/s", r.rate());
            if (r.simulated().saturated() || r.predicted().saturated()) {
                if (!pastKnee) {
                    notes.add(at + " and above, the offered load is past the knee: the queue grows for as long as the run "
                            + "lasts, so latencies measure the run's length, not a steady state, and the closed form has "
                            + "no stationary answer (it says unstable). " + pastKneeThroughput());
                    pastKnee = true;
                }
                continue;
            }
            if (r.clientErrorIsMaterial()) {
                notes.add(String.format(Locale.ROOT, "%s the client's own error against the server's truth (p99 %.1f ms "
                        + "in model time) is %.0f%% of the measured TTFT p99: this machine was too busy during this run "
                        + "for the measured tail to mean much; the simulated one, in virtual time, is what the engine did.",
                        at, r.groundTruthP99Ms(), 100 * r.groundTruthP99Ms() / r.measured().ttftP99Ms()));
            }
            compare(notes, at, "TTFT p50", r.measured().ttftP50Ms(), r.simulated().ttftP50Ms(), "measured", "simulated",
                    measuredWhy());
            compare(notes, at, "TPOT p50", r.measured().tpotP50Ms(), r.simulated().tpotP50Ms(), "measured", "simulated",
                    measuredWhy());
            comparePredicted(notes, at, "TTFT p50", r.predicted().ttftP50Ms(), r.simulated().ttftP50Ms(),
                    r.steadySimulated().ttftP50Ms(), fixedTiming ? FIXED_WAIT : "the chain holds the batch size fixed while an arrival waits for "
                            + "its iteration and is prefilled; in the engine the batch moves meanwhile");
            comparePredicted(notes, at, "TTFT p99", r.predicted().ttftP99Ms(), r.simulated().ttftP99Ms(),
                    r.steadySimulated().ttftP99Ms(), fixedTiming ? FIXED_WAIT : "the chain's tail is the wait for a batch slot, for the iteration "
                            + "an arrival lands in (runs of long prefill iterations included) and for the prompts sharing "
                            + "its prefill, each at a fixed batch size; the longer a run near saturation, the more bursts "
                            + "its tail holds");
            comparePredicted(notes, at, "TPOT p50", r.predicted().tpotP50Ms(), r.simulated().tpotP50Ms(),
                    r.steadySimulated().tpotP50Ms(), fixedTiming ? "the queue gives every token the mean inter-token "
                            + "latency; a run draws its own jitter" : "the chain gives each request the mean iteration of the batch it "
                            + "finds on arrival; in the engine the batch changes over the request's life");
            comparePredicted(notes, at, "completed req/s", r.predicted().completedPerS(), r.simulated().completedPerS(),
                    r.steadySimulated().completedPerS(), "the closed form completes requests at the nominal rate, while a "
                            + "run draws its own Poisson arrivals and output lengths");
            if (!waitingExplained && r.simulated().meanWaiting() >= 0.1
                    && r.predicted().meanWaiting() < 0.5 * r.simulated().meanWaiting()) {
                notes.add(String.format(Locale.ROOT, "%s requests waiting: predicted %.1f vs simulated %.1f: %s", at,
                        r.predicted().meanWaiting(), r.simulated().meanWaiting(), fixedTiming
                                ? "the queue counts only requests waiting for a free slot, which below the knee is rare; "
                                + "the engine also counts a request from its arrival to its first scheduling, however short."
                                : "the chain counts only requests waiting for a batch slot (above --max-num-seqs or the KV "
                                + "cache's limit), which below the knee is rare; the engine also counts every request from "
                                + "its arrival until its first iteration starts, a wait the chain puts inside TTFT."));
                waitingExplained = true;
            }
        }
        fallingPastTheKnee(notes);
        return notes;
    }

    /**
     * Past the knee the queue grows faster the higher the rate, so TTFT p99 can only rise with it: where the measured
     * one falls between two valid runs, the lighter run's tail held something the engine did not do, and the note
     * says what the client's error against the server's truth was there.
     */
    private void fallingPastTheKnee(List<String> notes) {
        List<DemoRow> over = rows.stream().filter(r -> r.measuredValid() && r.measured().overloaded()).toList();
        for (int i = 1; i < over.size(); i++) {
            DemoRow a = over.get(i - 1);
            DemoRow b = over.get(i);
            if (b.measured().ttftP99Ms() < a.measured().ttftP99Ms() && b.rate() > a.rate()) {
                notes.add(String.format(Locale.ROOT, "measured TTFT p99 falls from %s ms at %.2f req/s to %s ms at %.2f "
                                + "req/s although past the knee the queue grows faster the higher the rate (simulated: %s to "
                                + "%s ms): the client's error against the server's truth was %s ms at p99 in the first run "
                                + "and %s ms in the second.", DemoWords.ms(a.measured().ttftP99Ms()), a.rate(),
                        DemoWords.ms(b.measured().ttftP99Ms()), b.rate(), DemoWords.ms(a.simulated().ttftP99Ms()),
                        DemoWords.ms(b.simulated().ttftP99Ms()), DemoWords.ms(a.groundTruthP99Ms()),
                        DemoWords.ms(b.groundTruthP99Ms())));
            }
        }
    }

    /**
     * What the engine completed past the knee, said from the numbers: each method's completions per second between the
     * first and the last rate past the predicted knee, whether they rise, fall or stay, and the reason that fits what
     * they did.
     */
    private String pastKneeThroughput() {
        List<DemoRow> over = rows.stream().filter(r -> r.predicted().saturated()).toList();
        if (over.size() < 2) {
            return fixedTiming ? "Past the knee every slot is always busy, so completions stay at the slots' capacity."
                    : "Past the knee the engine completes requests at its capacity for the batch the queue keeps full.";
        }
        DemoRow first = over.get(0);
        DemoRow last = over.get(over.size() - 1);
        String simulated = completed("simulated", first.simulated(), last.simulated(), first, last);
        List<DemoRow> valid = over.stream().filter(DemoRow::measuredValid).toList();
        String measured = valid.size() < 2 ? "" : "; " + completed("measured", valid.get(0).measured(),
                valid.get(valid.size() - 1).measured(), valid.get(0), valid.get(valid.size() - 1));
        double change = last.simulated().completedPerS() / first.simulated().completedPerS() - 1;
        String why;
        if (Math.abs(change) <= DemoWords.SAME) {
            why = fixedTiming ? "every slot is busy whatever the queue, so the slots' capacity is all there is"
                    : "both runs' batches settled within the run, so a longer queue completes no more";
        } else if (change > 0) {
            why = fixedTiming ? "the lighter run ended while its slots were still filling with requests that had not "
                    + "finished yet"
                    : "the longer the queue, the sooner the batch fills, and one step of a fuller batch serves more (section "
                    + "2: the step time grows far slower than the batch) until --max-num-seqs or the KV cache caps it; a "
                    + "run just past the knee ends with its batch still filling, so the knee is measured at the most "
                    + "overloaded rate, where the batch settles within the run";
        } else {
            why = overlap(first.simulated(), last.simulated())
                    ? "the two runs' 95% intervals overlap, so the change is within what runs of this length tell apart"
                    : "more than the two runs' 95% intervals allow: their windows disagree";
        }
        return String.format(Locale.ROOT, "Past the knee, requests completed per second %s%s: %s.", simulated, measured,
                why);
    }

    /** "simulated rises from 50.20 to 53.90 req/s completed (57.20 to 85.97 req/s offered)". */
    private static String completed(String method, DemoSide from, DemoSide to, DemoRow a, DemoRow b) {
        return String.format(Locale.ROOT, "%s %s from %.2f to %.2f req/s completed (%.2f to %.2f req/s offered)", method,
                DemoWords.direction(from.completedPerS(), to.completedPerS()), from.completedPerS(),
                to.completedPerS(), a.rate(), b.rate());
    }

    /** Whether two sides' late service rates have overlapping 95% intervals (their windows' batch means). */
    private static boolean overlap(DemoSide a, DemoSide b) {
        RateEstimate x = RateEstimate.of(MeanInterval.of(a.serviceWindows()));
        RateEstimate y = RateEstimate.of(MeanInterval.of(b.serviceWindows()));
        return x.bounded() && y.bounded() && x.overlaps(y);
    }

    private static final String FIXED_WAIT = "the M/G/c wait is Allen and Cunneen's approximation, exact only for "
            + "exponential service times, and its percentiles read the wait as exponential once a request waits";

    private String measuredWhy() {
        return String.format(Locale.ROOT, "the measurement adds HTTP, SSE and client overheads and this machine's scheduling "
                + "jitter, multiplied by the time scale (%sx) when converted to model time; the client-vs-server column "
                + "bounds the client's own error", DemoCalibration.scale(timeScale));
    }

    /**
     * Predicted against the simulated run, and when they differ against a {@value DemoRow#STEADY_RUN_REQUESTS}-request
     * simulation at the same rate: the chain describes the steady state, which a short run near saturation has not
     * reached when it ends, so a gap that the long run closes is the run's length, not the model.
     */
    private static void comparePredicted(List<String> notes, String at, String metric, double predicted, double simulated,
                                         double steady, String modelWhy) {
        if (Double.isNaN(predicted) || Double.isNaN(simulated) || simulated == 0
                || Math.abs(predicted / simulated - 1) <= CLOSE) {
            return;
        }
        String head = String.format(Locale.ROOT, "%s %s predicted is %s", at, metric,
                DemoWords.against(predicted, simulated, "simulated"));
        if (Double.isNaN(steady) || steady == 0) {
            notes.add(head + ": " + modelWhy + ".");
        } else if (Math.abs(predicted / steady - 1) <= CLOSE) {
            notes.add(String.format(Locale.ROOT, "%s but %s: the chain describes the steady state, which this short run "
                    + "does not reach (near saturation the batch keeps filling for longer than the run lasts).", head,
                    DemoWords.against(predicted, steady, String.format(Locale.ROOT, "%,d simulated requests",
                            DemoRow.STEADY_RUN_REQUESTS))));
        } else {
            notes.add(String.format(Locale.ROOT, "%s and %s: %s.", head, DemoWords.against(predicted, steady,
                    String.format(Locale.ROOT, "%,d simulated requests", DemoRow.STEADY_RUN_REQUESTS)), modelWhy));
        }
    }

    private static void compare(List<String> notes, String at, String metric, double a, double b, String aName,
                                String bName, String why) {
        if (Double.isNaN(a) || Double.isNaN(b) || b == 0) {
            return;
        }
        double diff = a / b - 1;
        if (Math.abs(diff) > CLOSE) {
            notes.add(String.format(Locale.ROOT, "%s%s %s is %s: %s.", at.isEmpty() ? "" : at + " ", metric, aName,
                    DemoWords.against(a, b, bName), why));
        }
    }
}
